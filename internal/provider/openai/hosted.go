package openai

// Hosted tools are the ones OpenAI runs itself, inside the call: web search, the code
// interpreter and file search (over the vector store of upload_files' documents). The request
// offers them after our function tools; the stream reports each finished item as a
// provider.HostedToolChunk, which the engine only shows.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"massgen/internal/provider"
)

// paramToolTypes are the tool types a user may add through params: those OpenAI runs on its
// side. Anything else (function, custom, shell, computer...) makes calls that come back to
// us for an answer, which the engine cannot give since it never offered them.
var paramToolTypes = map[string]bool{
	"web_search": true, "web_search_2025_08_26": true, "web_search_preview": true,
	"web_search_preview_2025_03_11": true, "file_search": true, "code_interpreter": true,
	"image_generation": true, "mcp": true,
}

// isSearchTool tells the tool types that make the model search: a user's own entry of one
// replaces the plain web_search that enable_web_search adds, as two search tools would.
func isSearchTool(typ string) bool { return strings.HasPrefix(typ, "web_search") }

// isHostedItem tells the output items of the tools OpenAI runs itself.
func isHostedItem(typ string) bool {
	return typ == "web_search_call" || typ == "code_interpreter_call" || typ == "file_search_call"
}

// fileSearchTool searches the vector stores of the task's documents (Request.FileSearch).
// A file_search entry of the user's own in the params would make two: refused, since the
// API takes one per request.
func fileSearchTool(stores []string, user []map[string]any) (*responses.ToolUnionParam, error) {
	if len(stores) == 0 {
		return nil, nil
	}
	for _, t := range user {
		if t["type"] == "file_search" {
			return nil, fmt.Errorf("params: tools has a file_search entry and upload_files adds one for its documents: remove one of them")
		}
	}
	return &responses.ToolUnionParam{OfFileSearch: &responses.FileSearchToolParam{VectorStoreIDs: stores}}, nil
}

// hostedTools are the hosted tools to offer: web_search and code_interpreter as the options
// ask, unless the user's params configure one of that kind themselves (with filters, a
// container id...), then the user's own entries, as given.
func hostedTools(o provider.Options, user []map[string]any) []responses.ToolUnionParam {
	has := func(match func(string) bool) bool {
		return slices.ContainsFunc(user, func(t map[string]any) bool {
			typ, _ := t["type"].(string)
			return match(typ)
		})
	}
	var out []responses.ToolUnionParam
	if o.WebSearch && !has(isSearchTool) {
		out = append(out, responses.ToolUnionParam{OfWebSearch: &responses.WebSearchToolParam{
			Type: responses.WebSearchToolTypeWebSearch,
		}})
	}
	if o.CodeExecution && !has(func(t string) bool { return t == "code_interpreter" }) {
		out = append(out, responses.ToolUnionParam{OfCodeInterpreter: &responses.ToolCodeInterpreterParam{
			Container: responses.ToolCodeInterpreterContainerUnionParam{
				OfCodeInterpreterToolAuto: &responses.ToolCodeInterpreterContainerCodeInterpreterContainerAutoParam{},
			},
		}})
	}
	for _, t := range user {
		out = append(out, param.Override[responses.ToolUnionParam](t))
	}
	return out
}

// paramTools reads the tools of the params: a list of hosted-tool objects (paramToolTypes).
func paramTools(v any) ([]map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	var tools []map[string]any
	if err := roundTrip(v, &tools); err != nil {
		return nil, fmt.Errorf("params: tools must be a list of tool objects: %w", err)
	}
	for i, t := range tools {
		typ, _ := t["type"].(string)
		if !paramToolTypes[typ] {
			return nil, fmt.Errorf("params: tools[%d] has type %q: only tools OpenAI runs itself "+
				"(web_search, file_search, code_interpreter, image_generation, mcp) can be added here; "+
				"the agent's own tools come from MassGen", i, typ)
		}
	}
	return tools, nil
}

// paramInclude reads the include list of the params.
func paramInclude(v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	var inc []string
	if err := roundTrip(v, &inc); err != nil {
		return nil, fmt.Errorf("params: include must be a list of strings: %w", err)
	}
	return inc, nil
}

// roundTrip decodes a params value (from YAML or Go) into dst by way of JSON.
func roundTrip(v, dst any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, dst)
}

// include asks for what the hosted tools' chunks report: the sources a search read and the
// logs a run printed. Without it the items say only that they happened. The user's own
// entries follow, without repeats.
func include(o provider.Options, user []string) []responses.ResponseIncludable {
	var inc []responses.ResponseIncludable
	add := func(s responses.ResponseIncludable) {
		if !slices.Contains(inc, s) {
			inc = append(inc, s)
		}
	}
	if o.WebSearch {
		add(responses.ResponseIncludableWebSearchCallActionSources)
	}
	if o.CodeExecution {
		add(responses.ResponseIncludableCodeInterpreterCallOutputs)
	}
	for _, s := range user {
		add(responses.ResponseIncludable(s))
	}
	return inc
}

// hosted turns a finished web_search_call or code_interpreter_call item into its chunk, once
// per item id, and counts the searches OpenAI bills.
func (t *translator) hosted(item responses.ResponseOutputItemUnion) []provider.Chunk {
	if item.ID != "" {
		if t.hostedSeen[item.ID] {
			return nil
		}
		if t.hostedSeen == nil {
			t.hostedSeen = map[string]bool{}
		}
		t.hostedSeen[item.ID] = true
	}
	var c provider.HostedToolChunk
	switch item.Type {
	case "web_search_call":
		ws := item.AsWebSearchCall()
		c = webSearchChunk(ws)
		if ws.Status == "completed" && ws.Action.Type == "search" {
			t.searches++
		}
	case "code_interpreter_call":
		ci := item.AsCodeInterpreterCall()
		if ci.Code == "" {
			ci.Code = t.code[ci.ID]
		}
		c = codeChunk(ci)
	case "file_search_call":
		fs := item.AsFileSearchCall()
		c = fileSearchChunk(fs)
		if fs.Status == "completed" {
			t.fileCalls++
		}
	default:
		return nil
	}
	c.Call.ID = item.ID
	c.Failed = item.Status == "failed" || item.Status == "incomplete"
	return []provider.Chunk{c}
}

// webSearchChunk reports what the search did: a query (the first, with all of them when the
// model sent several), a page it opened, or a pattern it looked for in one.
func webSearchChunk(ws responses.ResponseFunctionWebSearch) provider.HostedToolChunk {
	a := ws.Action
	var args any
	var result string
	switch a.Type {
	case "search":
		q := struct {
			Query   string   `json:"query"`
			Queries []string `json:"queries,omitempty"`
		}{Query: a.Query}
		if q.Query == "" && len(a.Queries) > 0 {
			q.Query = a.Queries[0]
		}
		if len(a.Queries) > 1 {
			q.Queries = a.Queries
		}
		args = q
		if a.JSON.Sources.Valid() {
			sources := make([]provider.Source, len(a.Sources))
			for i, s := range a.Sources {
				sources[i] = provider.Source{URL: s.URL}
			}
			result = provider.SearchSummary(sources)
		}
	case "open_page":
		args = struct {
			URL string `json:"url"`
		}{a.URL}
	case "find", "find_in_page": // "find" is the older name
		args = struct {
			Pattern string `json:"pattern"`
			URL     string `json:"url"`
		}{a.Pattern, a.URL}
	default:
		args = struct{}{}
	}
	return provider.HostedToolChunk{
		Call:   provider.ToolCall{Name: provider.HostedWebSearch, Arguments: provider.HostedArgs(args)},
		Result: result,
	}
}

// fileSearchChunk reports what the file search looked for and, when the results were
// included, how many passages came back and from which files.
func fileSearchChunk(fs responses.ResponseFileSearchToolCall) provider.HostedToolChunk {
	var result string
	if fs.JSON.Results.Valid() {
		var files []string
		for _, r := range fs.Results {
			if r.Filename != "" && !slices.Contains(files, r.Filename) {
				files = append(files, r.Filename)
			}
		}
		result = fmt.Sprintf("%d results", len(fs.Results))
		if len(files) > 0 {
			result += " from " + strings.Join(files[:min(len(files), sourcesShown)], ", ")
			if len(files) > sourcesShown {
				result += fmt.Sprintf(" and %d more files", len(files)-sourcesShown)
			}
		}
	}
	return provider.HostedToolChunk{
		Call: provider.ToolCall{Name: provider.HostedFileSearch, Arguments: provider.HostedArgs(struct {
			Queries []string `json:"queries"`
		}{fs.Queries})},
		Result: result,
	}
}

// sourcesShown is how many files a file search summary names.
const sourcesShown = 3

// codeChunk reports the code that ran and what it printed; images are only named, their URL
// being a data URL or a container file nobody here can open.
func codeChunk(ci responses.ResponseCodeInterpreterToolCall) provider.HostedToolChunk {
	var parts []string
	for _, o := range ci.Outputs {
		switch o.Type {
		case "logs":
			if l := strings.TrimRight(o.Logs, "\n"); l != "" {
				parts = append(parts, l)
			}
		case "image":
			parts = append(parts, "image output")
		}
	}
	result := strings.Join(parts, "\n")
	if result == "" && ci.JSON.Outputs.Valid() {
		result = "no output"
	}
	return provider.HostedToolChunk{
		Call: provider.ToolCall{Name: provider.HostedCodeExecution, Arguments: provider.HostedArgs(struct {
			Code string `json:"code"`
		}{ci.Code})},
		Result: provider.Clip(result, provider.MaxHostedOutput),
	}
}

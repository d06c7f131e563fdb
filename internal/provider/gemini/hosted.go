package gemini

import (
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/genai"

	"massgen/internal/provider"
)

// Hosted tools: Google Search grounding and code execution run on Google's side. The model
// already has their results, so the stream only reports them (provider.HostedToolChunk) and
// the request never replays them: executableCode and codeExecutionResult parts are not turned
// into answer text, so they never reach provider.Message and cannot be sent back half-formed.

// hostedTools returns the built-in tools the options switch on.
func hostedTools(o provider.Options) []*genai.Tool {
	var tools []*genai.Tool
	if o.WebSearch {
		tools = append(tools, &genai.Tool{GoogleSearch: &genai.GoogleSearch{}})
	}
	if o.CodeExecution {
		tools = append(tools, &genai.Tool{CodeExecution: &genai.ToolCodeExecution{}})
	}
	return tools
}

// hostedOptionNames names the config keys that switched hosted tools on, for error messages.
func hostedOptionNames(o provider.Options) string {
	var keys []string
	if o.WebSearch {
		keys = append(keys, "enable_web_search")
	}
	if o.CodeExecution {
		keys = append(keys, "enable_code_execution")
	}
	return strings.Join(keys, " and ")
}

// hostedToolsRejected reports whether a 400 message says the model cannot use the requested
// built-in tools. Requests never pair them with function declarations (textcalls.go), so
// this is a model without them ("Search Grounding is not supported.", "Code execution is not
// enabled for models/...") or a rule Google adds later; the wording varies by model and over
// time, hence the loose match, which also knows the messages for the pairing ("Tool use with
// function calling is unsupported", "Multiple tools are supported only when they are all
// search tools.").
func hostedToolsRejected(msg string) bool {
	m := strings.ToLower(msg)
	tool := false
	for _, k := range []string{"function calling", "built-in tool", "builtin tool", "multiple tools",
		"tool use", "search grounding", "google_search", "googlesearch", "google search",
		"code execution", "code_execution", "codeexecution", "server_side_tool", "serversidetool"} {
		if strings.Contains(m, k) {
			tool = true
			break
		}
	}
	if !tool {
		return false
	}
	for _, k := range []string{"unsupported", "not supported", "not enabled", "not allowed",
		"only when", "only supported", "enable"} {
		if strings.Contains(m, k) {
			return true
		}
	}
	return false
}

// hostedToolsError is the fatal error for a 400 that rejects the hosted tools: the fix is in
// the config, so it says which keys to change. detail is already redacted.
func (p *Provider) hostedToolsError(model, detail string) *provider.Error {
	keys := hostedOptionNames(p.o)
	return &provider.Error{Provider: p.name, Status: http.StatusBadRequest, Fatal: true, Err: fmt.Errorf(
		"model %q rejected the hosted tools of %s (not every Gemini model offers Google Search "+
			"or code execution): remove %s from this backend in the config, or use a model that "+
			"supports it (service said: %s)",
		model, keys, keys, detail)}
}

// perQuerySearch reports whether Google bills the model's grounding per search query
// (Gemini 3 on) rather than per grounded prompt. It must agree with usage.SearchFee, which
// prices the count this package reports.
func perQuerySearch(model string) bool {
	return strings.HasPrefix(strings.TrimPrefix(strings.ToLower(model), "models/"), "gemini-3")
}

// executable records an executableCode part until its codeExecutionResult arrives, which may
// be in a later chunk.
func (t *translator) executable(ec *genai.ExecutableCode) {
	t.pending = append(t.pending, ec)
}

// codeResult pairs a codeExecutionResult with its executableCode: by ID when the wire has
// one, else the oldest still waiting (the API sends each result right after its code).
func (t *translator) codeResult(r *genai.CodeExecutionResult) provider.Chunk {
	var ec *genai.ExecutableCode
	i := -1
	for j, p := range t.pending {
		if r.ID == "" || p.ID == r.ID {
			i = j
			break
		}
	}
	if i >= 0 {
		ec = t.pending[i]
		t.pending = append(t.pending[:i], t.pending[i+1:]...)
	}
	c := t.codeChunk(ec, r.ID)
	c.Result, c.Failed = codeOutcome(r)
	return c
}

// codeChunk builds the chunk for a piece of code; ec is nil when a result came without its code.
func (t *translator) codeChunk(ec *genai.ExecutableCode, id string) provider.HostedToolChunk {
	code := ""
	if ec != nil {
		code = ec.Code
		if ec.ID != "" {
			id = ec.ID
		}
	}
	if id == "" {
		id = t.hostedID(provider.HostedCodeExecution)
	}
	return provider.HostedToolChunk{Call: provider.ToolCall{
		ID: id, Name: provider.HostedCodeExecution, Arguments: provider.HostedArgs(map[string]string{"code": code})}}
}

// codeOutcome summarises a result. Only OK is a success; an unset outcome says nothing either way.
func codeOutcome(r *genai.CodeExecutionResult) (string, bool) {
	out := provider.Clip(r.Output, provider.MaxHostedOutput)
	switch r.Outcome {
	case genai.OutcomeOK, genai.OutcomeUnspecified, "":
		return out, false
	case genai.OutcomeDeadlineExceeded:
		return strings.TrimSpace("timed out (" + string(r.Outcome) + ")\n" + out), true
	}
	if out == "" {
		out = "failed (" + string(r.Outcome) + ")"
	}
	return out, true
}

// ground collects grounding metadata. Streams may repeat it on several chunks, so queries and
// sources are kept once each, in order of first appearance.
func (t *translator) ground(gm *genai.GroundingMetadata) {
	for _, q := range gm.WebSearchQueries {
		if q = strings.TrimSpace(q); q != "" && !t.seen[q] {
			t.mark(q)
			t.queries = append(t.queries, q)
		}
	}
	for _, c := range gm.GroundingChunks {
		if c == nil || c.Web == nil || (c.Web.URI == "" && c.Web.Title == "") {
			continue
		}
		key := "\x00source:" + c.Web.URI + "\x00" + c.Web.Title
		if !t.seen[key] {
			t.mark(key)
			t.sources = append(t.sources, c.Web)
		}
	}
}

func (t *translator) mark(key string) {
	if t.seen == nil {
		t.seen = map[string]bool{}
	}
	t.seen[key] = true
}

// hostedEnd returns the chunks for code that never got a result (the stream was cut short)
// and one chunk per web search query, and the number of searches Google bills: one per
// grounded response before Gemini 3, one per query from Gemini 3. A response grounded on
// sources without listing its queries counts as one search.
func (t *translator) hostedEnd() ([]provider.Chunk, int64) {
	var out []provider.Chunk
	for _, ec := range t.pending {
		out = append(out, t.codeChunk(ec, ""))
	}
	t.pending = nil
	if len(t.queries) == 0 && len(t.sources) == 0 {
		return out, 0
	}
	sources := make([]provider.Source, len(t.sources))
	for i, w := range t.sources {
		sources[i] = provider.Source{Title: w.Title, URL: w.URI}
	}
	result := provider.SearchSummary(sources)
	queries := t.queries
	if len(queries) == 0 {
		queries = []string{""}
	}
	for _, q := range queries {
		args := "{}"
		if q != "" {
			args = provider.HostedArgs(map[string]string{"query": q})
		}
		out = append(out, provider.HostedToolChunk{Call: provider.ToolCall{
			ID: t.hostedID(provider.HostedWebSearch), Name: provider.HostedWebSearch, Arguments: args},
			Result: result})
	}
	if t.perQuery {
		return out, int64(len(queries))
	}
	return out, 1
}

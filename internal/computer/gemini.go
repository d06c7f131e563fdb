package computer

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"google.golang.org/genai"

	"massgen/internal/provider"
	geminiapi "massgen/internal/provider/gemini"
	"massgen/internal/tool"
)

// GeminiModel is the model MassGen's gemini_computer_use calls; the model argument changes it.
const GeminiModel = "gemini-2.5-computer-use-preview-10-2025"

// geminiDefaults are MassGen's gemini_computer_use defaults (the display Gemini recommends).
var geminiDefaults = defaults{width: 1440, height: 900, iterations: 25}

// keptShots is how many of the latest turns keep their screenshots in the conversation Gemini
// is sent again each turn; older ones are dropped, as Google's reference loop does, so that a
// long task does not pay for every screenshot on every call.
const keptShots = 3

// geminiGrid is the size of the grid Gemini's coordinates are on: 0 to 999 both ways.
const geminiGrid = 1000

// GeminiTool is MassGen's gemini_computer_use under name: Gemini's computer-use model carries
// out the task on the agent's desktop with its ComputerUse tool.
func GeminiTool(name string, ds *Desktops) tool.Tool {
	return tool.Tool{
		Spec: provider.ToolSpec{Name: name, Parameters: taskSchema("task", geminiExtras),
			Description: "Hand a task to Gemini's computer use: it sees a web browser on a virtual desktop through screenshots " +
				"and clicks, types, scrolls and navigates until the task is done, then answers. Give the whole task in task."},
		Run: func(ctx context.Context, args string) tool.Result { return ds.gemini(ctx, args) },
	}
}

var geminiExtras = map[string]any{
	"initial_url":        map[string]any{"type": "string", "description": "A page to open before the task starts (as url)."},
	"include_thoughts":   map[string]any{"type": "boolean", "description": "Ask for the model's thoughts (default true)."},
	"excluded_functions": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Gemini's predefined functions it may not use."},
}

func (ds *Desktops) gemini(ctx context.Context, raw string) tool.Result {
	a, b, d, refusal := ds.start(ctx, raw, Gemini, "Gemini", geminiDefaults)
	if refusal != "" {
		return tool.Errorf(refusal)
	}
	o := ds.o
	model := cmp.Or(a.Model, GeminiModel)
	base, version, err := geminiapi.SplitBaseURL(b.BaseURL)
	if err != nil {
		return tool.Errorf(cleanErr(b, err))
	}
	m := &meter{}
	// Every field the SDK would otherwise fill from GOOGLE_API_KEY, GOOGLE_GENAI_USE_VERTEXAI
	// and GOOGLE_GEMINI_BASE_URL is set.
	client, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: b.APIKey, Backend: genai.BackendGeminiAPI,
		HTTPClient: capped(cmp.Or(o.HTTPClient, http.DefaultClient), o.MaxResponseBytes, m),
		HTTPOptions: genai.HTTPOptions{BaseURL: base, APIVersion: version,
			RetryOptions: &genai.HTTPRetryOptions{Attempts: genai.Ptr[int32](3)}}})
	if err != nil {
		return tool.Errorf("Gemini client: " + cleanErr(b, err))
	}
	cfg := &genai.GenerateContentConfig{Tools: []*genai.Tool{{ComputerUse: &genai.ComputerUse{
		Environment: genai.EnvironmentBrowser, ExcludedPredefinedFunctions: a.ExcludedFunctions}}}}
	if on(a.IncludeThoughts) {
		cfg.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: true}
	}
	price := pricing{backend: Gemini, model: model, imageTokens: geminiImageTokens(a.DisplayWidth, a.DisplayHeight)}
	say := tool.Output(ctx)
	var spent provider.Usage
	result := func(r tool.Result) tool.Result { r.Spent = spent; return r }

	png, err := screenshot(ctx, d, o.Browser.Dir)
	if err != nil {
		return tool.Errorf(err.Error())
	}
	contents := []*genai.Content{{Role: genai.RoleUser, Parts: []*genai.Part{{Text: a.Query}, {InlineData: &genai.Blob{MIMEType: "image/png", Data: png}}}}}
	for turn := 1; turn <= a.MaxIterations; turn++ {
		m.call(dropOldShots(contents), 0)
		resp, err := client.Models.GenerateContent(ctx, model, contents, cfg)
		if err != nil {
			spent = spent.Add(m.cutOff(price))
			return result(tool.Errorf("Gemini computer use: " + cleanErr(b, err)))
		}
		if u := resp.UsageMetadata; u != nil {
			spent = spent.Add(priced(price, provider.Usage{InputTokens: int64(u.PromptTokenCount + u.ToolUsePromptTokenCount),
				CachedInputTokens: int64(u.CachedContentTokenCount), OutputTokens: int64(u.CandidatesTokenCount + u.ThoughtsTokenCount),
				ReasoningTokens: int64(u.ThoughtsTokenCount)}))
		} else {
			spent = spent.Add(m.cutOff(price)) // no usage reported: estimated, and marked so
		}
		if len(resp.Candidates) == 0 || resp.Candidates[0].Content == nil || len(resp.Candidates[0].Content.Parts) == 0 {
			why := "no answer"
			if len(resp.Candidates) > 0 {
				why = "finish reason " + string(resp.Candidates[0].FinishReason)
			} else if pf := resp.PromptFeedback; pf != nil {
				why = "blocked: " + string(pf.BlockReason)
			}
			return result(tool.Errorf("Gemini returned nothing to do (" + why + ")"))
		}
		content := resp.Candidates[0].Content
		contents = append(contents, content)
		var text strings.Builder
		var calls []*genai.FunctionCall
		for _, p := range content.Parts {
			switch {
			case p.FunctionCall != nil:
				calls = append(calls, p.FunctionCall)
			case p.Text != "" && !p.Thought:
				text.WriteString(p.Text)
			}
		}
		if len(calls) == 0 {
			return result(answer(text.String()))
		}
		var parts []*genai.Part
		done := 0
		for _, fc := range calls {
			if why := confirmation(fc); why != "" {
				return result(tool.Errorf(why))
			}
			if done >= maxActions {
				parts = append(parts, functionResponse(fc, map[string]any{"error": fmt.Sprintf("not carried out: at most %d actions a turn; ask for the rest in the next turn", maxActions)}, nil))
				continue
			}
			done++
			steps, err := geminiSteps(fc.Name, fc.Args, a.DisplayWidth, a.DisplayHeight)
			acted := false
			for _, s := range steps {
				if _, _, err = do(ctx, d, s); err != nil {
					break
				}
				acted = true
			}
			response := map[string]any{}
			if err != nil {
				say(fmt.Sprintf("computer %s: %v\n", fc.Name, err))
				response["error"] = err.Error()
			} else {
				say(fmt.Sprintf("computer: %s\n", fc.Name))
			}
			var shot []byte
			if acted || err == nil {
				pause(ctx)
				if shot, err = screenshot(ctx, d, o.Browser.Dir); err != nil {
					return result(tool.Errorf(err.Error()))
				}
			}
			response["url"], _ = d.Browser().Page(ctx)
			parts = append(parts, functionResponse(fc, response, shot))
		}
		contents = append(contents, &genai.Content{Role: genai.RoleUser, Parts: parts})
	}
	return result(tool.Errorf(fmt.Sprintf("reached max_iterations (%d) without finishing the task", a.MaxIterations)))
}

// confirmation is why the task stops at a call Gemini's safety system wants a person to
// confirm (safety_decision require_confirmation), or "": no person watches the loop, so the
// action is not carried out.
func confirmation(fc *genai.FunctionCall) string {
	sd, _ := fc.Args["safety_decision"].(map[string]any)
	if sd == nil || sd["decision"] != "require_confirmation" {
		return ""
	}
	why, _ := sd["explanation"].(string)
	return fmt.Sprintf("Gemini asked for a person to confirm %s before it is done (%s): no person confirms computer actions here, so it was not done and the task stopped",
		clip(fc.Name, 60), clip(why, 500))
}

func functionResponse(fc *genai.FunctionCall, response map[string]any, png []byte) *genai.Part {
	r := &genai.FunctionResponse{ID: fc.ID, Name: fc.Name, Response: response}
	if png != nil {
		r.Parts = []*genai.FunctionResponsePart{{InlineData: &genai.FunctionResponseBlob{MIMEType: "image/png", Data: png}}}
	}
	return &genai.Part{FunctionResponse: r}
}

// dropOldShots removes the screenshots of all but the latest keptShots turns of function
// responses, and counts those the request carries.
func dropOldShots(contents []*genai.Content) shotsSent {
	var shots shotsSent
	turns := 0
	for i := len(contents) - 1; i >= 0; i-- {
		c := contents[i]
		responded := false
		for _, p := range c.Parts {
			if fr := p.FunctionResponse; fr != nil && len(fr.Parts) > 0 {
				responded = true
				if turns >= keptShots {
					fr.Parts = nil
					continue
				}
				for _, q := range fr.Parts {
					if q.InlineData != nil {
						shots.add(q.InlineData.Data)
					}
				}
			}
			if p.InlineData != nil {
				shots.add(p.InlineData.Data)
			}
		}
		if responded {
			turns++
		}
	}
	return shots
}

// geminiSteps translates one of Gemini's predefined functions; its coordinates are on a
// 1000x1000 grid over the w x h screen.
func geminiSteps(name string, args map[string]any, w, h int) ([]step, error) {
	num := func(key string) (float64, bool) { f, ok := args[key].(float64); return f, ok }
	str := func(key string) string { s, _ := args[key].(string); return s }
	flag := func(key string) bool { b, ok := args[key].(bool); return !ok || b } // MassGen's defaults are true
	at := func(xk, yk string) (*point, error) {
		x, okx := num(xk)
		y, oky := num(yk)
		if !okx || !oky {
			return nil, fmt.Errorf("%s needs %s and %s", name, xk, yk)
		}
		for _, v := range []float64{x, y} {
			if math.IsNaN(v) || v < 0 || v >= geminiGrid {
				return nil, fmt.Errorf("(%g, %g) is off the grid: coordinates are 0 to %d", x, y, geminiGrid-1)
			}
		}
		return &point{int(x * float64(w) / geminiGrid), int(y * float64(h) / geminiGrid)}, nil
	}
	switch name {
	case "open_web_browser":
		return nil, nil // it is open
	case "wait_5_seconds":
		return []step{{kind: stepWait, dur: 5 * time.Second}}, nil
	case "go_back":
		return []step{{kind: stepBack}}, nil
	case "go_forward":
		return []step{{kind: stepForward}}, nil
	case "search":
		return []step{{kind: stepNavigate, text: "https://www.google.com/"}}, nil
	case "navigate":
		u := str("url")
		if u == "" {
			return nil, fmt.Errorf("navigate needs url")
		}
		if !strings.Contains(u, "://") && !strings.HasPrefix(u, "about:") {
			u = "https://" + u
		}
		return []step{{kind: stepNavigate, text: u}}, nil
	case "click_at", "hover_at":
		p, err := at("x", "y")
		if err != nil {
			return nil, err
		}
		if name == "hover_at" {
			return []step{{kind: stepMove, at: p}}, nil
		}
		return []step{{kind: stepClick, at: p, button: "left", count: 1}}, nil
	case "type_text_at":
		p, err := at("x", "y")
		if err != nil {
			return nil, err
		}
		steps := []step{{kind: stepClick, at: p, button: "left", count: 1}}
		if flag("clear_before_typing") {
			steps = append(steps, step{kind: stepKey, text: "ctrl+a"}, step{kind: stepKey, text: "BackSpace"})
		}
		steps = append(steps, step{kind: stepType, text: str("text")})
		if flag("press_enter") {
			steps = append(steps, step{kind: stepKey, text: "Return"})
		}
		return steps, nil
	case "key_combination":
		combo, err := keyCombo(strings.Split(str("keys"), "+"))
		if err != nil {
			return nil, err
		}
		return []step{{kind: stepKey, text: combo}}, nil
	case "scroll_document", "scroll_at":
		dir := cmp.Or(str("direction"), "down")
		var p *point
		px := 500.0 // scroll_document: about half a screen
		if name == "scroll_at" {
			var err error
			if p, err = at("x", "y"); err != nil {
				return nil, err
			}
			mag, ok := num("magnitude")
			if !ok {
				mag = 800
			}
			if mag < 0 || mag >= geminiGrid*10 {
				return nil, fmt.Errorf("magnitude %g is out of range", mag)
			}
			span := h
			if dir == "left" || dir == "right" {
				span = w
			}
			px = mag * float64(span) / geminiGrid
		}
		return []step{{kind: stepScroll, at: p, dir: dir, amount: max(notches(px), 1)}}, nil
	case "drag_and_drop":
		from, err := at("x", "y")
		if err != nil {
			return nil, err
		}
		to, err := at("destination_x", "destination_y")
		if err != nil {
			return nil, err
		}
		return []step{{kind: stepDrag, at: from, path: []point{*to}}}, nil
	}
	return nil, fmt.Errorf("unknown function %q", clip(name, 60))
}

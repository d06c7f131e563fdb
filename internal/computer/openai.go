package computer

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"massgen/internal/desktop"
	"massgen/internal/provider"
	"massgen/internal/tool"
)

// OpenAIModel is the model MassGen's computer_use calls; the model argument changes it.
const OpenAIModel = "computer-use-preview"

const openaiBase = "https://api.openai.com/v1"

// openaiDefaults are MassGen's computer_use defaults.
var openaiDefaults = defaults{width: 1920, height: 1080, iterations: 50}

// OpenAITool is MassGen's computer_use under name: OpenAI's computer-use model carries out
// the task on the agent's desktop with the Responses API's computer_use_preview tool.
func OpenAITool(name string, ds *Desktops) tool.Tool {
	return tool.Tool{
		Spec: provider.ToolSpec{Name: name, Parameters: taskSchema("task", openaiExtras),
			Description: "Hand a task to OpenAI's computer use (computer-use-preview): it sees a virtual desktop with a web browser " +
				"through screenshots and clicks, types and scrolls until the task is done, then answers. Give the whole task in task."},
		Run: func(ctx context.Context, args string) tool.Result { return ds.openai(ctx, args) },
	}
}

var openaiExtras = map[string]any{
	"include_reasoning": map[string]any{"type": "boolean", "description": "Ask for the model's reasoning summaries (default true)."},
}

// domainChecks are OpenAI's safety checks about where the browser is: massgen acknowledges
// them when allowed_domains confines the browser, whose proxy enforces the list whatever
// the model does. Every other check (malicious_instructions, a code massgen does not know)
// ends the task unacknowledged: no person watches the loop to confirm it.
var domainChecks = map[string]bool{"irrelevant_domain": true, "sensitive_domain": true}

func (ds *Desktops) acknowledges(code string) bool {
	p := ds.o.Browser.Policy
	return domainChecks[code] && p != nil && len(p.Allowed) > 0
}

func (ds *Desktops) openai(ctx context.Context, raw string) tool.Result {
	a, b, d, refusal := ds.start(ctx, raw, OpenAI, "OpenAI", openaiDefaults)
	if refusal != "" {
		return tool.Errorf(refusal)
	}
	o := ds.o
	model := cmp.Or(a.Model, OpenAIModel)
	m := &meter{}
	// Built without openai.NewClient, whose environment defaults (OPENAI_API_KEY,
	// OPENAI_ORG_ID, ...) would change the key and headers behind the config's back.
	svc := responses.NewResponseService(option.WithBaseURL(cmp.Or(b.BaseURL, openaiBase)), option.WithAPIKey(b.APIKey),
		option.WithHTTPClient(capped(cmp.Or(o.HTTPClient, http.DefaultClient), o.MaxResponseBytes, m)), option.WithMaxRetries(2))
	env := responses.ComputerUsePreviewToolEnvironmentBrowser
	if a.Environment == "linux" {
		env = responses.ComputerUsePreviewToolEnvironmentLinux
	}
	tools := []responses.ToolUnionParam{responses.ToolParamOfComputerUsePreview(int64(a.DisplayHeight), int64(a.DisplayWidth), env)}
	price := pricing{backend: OpenAI, model: model, imageTokens: openaiImageTokens(a.DisplayWidth, a.DisplayHeight)}
	say := tool.Output(ctx)
	var spent provider.Usage
	result := func(r tool.Result) tool.Result { r.Spent = spent; return r }

	png, err := screenshot(ctx, d, o.Browser.Dir)
	if err != nil {
		return tool.Errorf(err.Error())
	}
	var shots shotsSent
	shots.add(png)
	input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam{
		{OfInputText: &responses.ResponseInputTextParam{Text: a.Query}},
		{OfInputImage: &responses.ResponseInputImageParam{Detail: responses.ResponseInputImageDetailHigh, ImageURL: param.NewOpt(dataURL(png))}},
	}, responses.EasyInputMessageRoleUser)}
	var prev string
	var carried int64 // the context OpenAI keeps with the previous response, billed again
	for turn := 1; turn <= a.MaxIterations; turn++ {
		p := responses.ResponseNewParams{Model: model, Tools: tools, Truncation: responses.ResponseNewParamsTruncationAuto,
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}}
		if prev != "" {
			p.PreviousResponseID = param.NewOpt(prev)
		}
		if on(a.IncludeReasoning) {
			p.Reasoning = shared.ReasoningParam{Summary: shared.ReasoningSummaryConcise}
		}
		m.call(shots, carried)
		resp, err := svc.New(ctx, p)
		if err != nil {
			spent = spent.Add(m.cutOff(price))
			return result(tool.Errorf("OpenAI computer use: " + cleanErr(b, err)))
		}
		if resp.JSON.Usage.Valid() {
			u := resp.Usage
			spent = spent.Add(priced(price, provider.Usage{InputTokens: u.InputTokens, CachedInputTokens: u.InputTokensDetails.CachedTokens,
				OutputTokens: u.OutputTokens, ReasoningTokens: u.OutputTokensDetails.ReasoningTokens}))
			carried = u.InputTokens + u.OutputTokens
		} else {
			// No usage reported (a proxy, a fake): the call is paid for all the same.
			spent = spent.Add(m.cutOff(price))
			in, out := m.estimate(price)
			carried = in + out
		}
		prev = resp.ID
		var calls []responses.ResponseComputerToolCall
		for _, item := range resp.Output {
			if item.Type == "computer_call" {
				calls = append(calls, item.AsComputerCall())
			}
		}
		switch {
		case resp.Status == responses.ResponseStatusFailed:
			return result(tool.Errorf("OpenAI computer use failed: " + clip(resp.Error.Message, 2000)))
		case len(calls) == 0 && resp.Status == responses.ResponseStatusIncomplete:
			return result(tool.Errorf(fmt.Sprintf("OpenAI stopped: %s; what it said: %s", resp.IncompleteDetails.Reason, clip(resp.OutputText(), 2000))))
		case len(calls) == 0:
			return result(answer(resp.OutputText()))
		case len(calls) > maxActions:
			// Each call must be answered with a screenshot: a model asking for this many at
			// once would multiply what the next call costs.
			return result(tool.Errorf(fmt.Sprintf("OpenAI asked for %d computer actions in one turn; at most %d are carried out: the task was stopped", len(calls), maxActions)))
		}
		if why := ds.refusedChecks(calls); why != "" {
			return result(tool.Errorf(why))
		}
		input, shots = nil, shotsSent{}
		var notes []string
		done := 0
		for _, c := range calls {
			for _, act := range openaiActions(c) {
				if done >= maxActions {
					notes = append(notes, fmt.Sprintf("%s: not carried out: at most %d actions a turn; ask for the rest in the next turn", act.Type, maxActions))
					continue
				}
				done++
				if err := carryOut(ctx, d, act); err != nil {
					say(fmt.Sprintf("computer %s: %v\n", act.Type, err))
					notes = append(notes, fmt.Sprintf("%s: %v", act.Type, err))
				}
			}
			pause(ctx)
			png, err := screenshot(ctx, d, o.Browser.Dir)
			if err != nil {
				return result(tool.Errorf(err.Error()))
			}
			shots.add(png)
			out := responses.ResponseInputItemParamOfComputerCallOutput(c.CallID, responses.ResponseComputerToolCallOutputScreenshotParam{ImageURL: param.NewOpt(dataURL(png))})
			for _, sc := range c.PendingSafetyChecks {
				out.OfComputerCallOutput.AcknowledgedSafetyChecks = append(out.OfComputerCallOutput.AcknowledgedSafetyChecks,
					responses.ResponseInputItemComputerCallOutputAcknowledgedSafetyCheckParam{ID: sc.ID, Code: param.NewOpt(sc.Code), Message: param.NewOpt(sc.Message)})
			}
			input = append(input, out)
		}
		if len(notes) > 0 {
			// A computer_call_output holds only a screenshot: what failed is said beside it.
			input = append(input, responses.ResponseInputItemParamOfMessage("Not done:\n"+strings.Join(notes, "\n"), responses.EasyInputMessageRoleUser))
		}
	}
	return result(tool.Errorf(fmt.Sprintf("reached max_iterations (%d) without finishing the task", a.MaxIterations)))
}

// refusedChecks is why the task stops at calls' safety checks, or "" when massgen
// acknowledges them all.
func (ds *Desktops) refusedChecks(calls []responses.ResponseComputerToolCall) string {
	var refused []string
	domain := false
	for _, c := range calls {
		for _, sc := range c.PendingSafetyChecks {
			if !ds.acknowledges(sc.Code) {
				refused = append(refused, fmt.Sprintf("%s (%s)", cmp.Or(sc.Code, "unnamed"), clip(sc.Message, 500)))
				domain = domain || domainChecks[sc.Code]
			}
		}
	}
	if len(refused) == 0 {
		return ""
	}
	hint := ""
	if domain {
		hint = " Domain checks are acknowledged when preset_args.allowed_domains confines the browser."
	}
	return "OpenAI's safety checks were not acknowledged, so the task stopped before the action: " + strings.Join(refused, "; ") +
		". No person confirms computer actions here." + hint
}

func dataURL(png []byte) string {
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
}

// cuaAction is one action of a computer_call, in OpenAI's vocabulary.
type cuaAction struct {
	Type   string   `json:"type"`
	Button string   `json:"button"`
	X      *float64 `json:"x"`
	Y      *float64 `json:"y"`
	Keys   []string `json:"keys"`
	Path   []struct {
		X float64 `json:"x"`
		Y float64 `json:"y"`
	} `json:"path"`
	ScrollX float64 `json:"scroll_x"`
	ScrollY float64 `json:"scroll_y"`
	Text    string  `json:"text"`
}

// openaiActions are the actions of a call: its action, or its batched actions.
func openaiActions(c responses.ResponseComputerToolCall) []cuaAction {
	var raws []string
	if c.JSON.Action.Valid() {
		raws = append(raws, c.Action.RawJSON())
	}
	for _, act := range c.Actions {
		raws = append(raws, act.RawJSON())
	}
	out := make([]cuaAction, 0, len(raws))
	for _, r := range raws {
		var a cuaAction
		if err := json.Unmarshal([]byte(r), &a); err != nil {
			a.Type = "(unreadable)"
		}
		out = append(out, a)
	}
	return out
}

// carryOut does one OpenAI action on d.
func carryOut(ctx context.Context, d *desktop.Desktop, a cuaAction) error {
	steps, err := openaiSteps(a)
	if err != nil {
		return err
	}
	for _, s := range steps {
		if _, _, err := do(ctx, d, s); err != nil {
			return err
		}
	}
	return nil
}

// openaiSteps translates an OpenAI action, in screen pixels. A screenshot is no step: one is
// sent after every call.
func openaiSteps(a cuaAction) ([]step, error) {
	at := func() (*point, error) {
		if a.X == nil || a.Y == nil {
			return nil, fmt.Errorf("%s needs x and y", a.Type)
		}
		return pixel(*a.X, *a.Y)
	}
	switch a.Type {
	case "screenshot":
		return nil, nil
	case "click", "double_click":
		p, err := at()
		if err != nil {
			return nil, err
		}
		n := 1
		if a.Type == "double_click" {
			n = 2
		}
		switch a.Button {
		case "", "left", "right", "middle":
			return []step{{kind: stepClick, at: p, button: cmp.Or(a.Button, "left"), count: n}}, nil
		case "wheel":
			return []step{{kind: stepClick, at: p, button: "middle", count: n}}, nil
		case "back":
			return []step{{kind: stepBack}}, nil
		case "forward":
			return []step{{kind: stepForward}}, nil
		}
		return nil, fmt.Errorf("no mouse button %q: use left, right, wheel, back or forward", clip(a.Button, 40))
	case "move":
		p, err := at()
		if err != nil {
			return nil, err
		}
		return []step{{kind: stepMove, at: p}}, nil
	case "drag":
		if len(a.Path) < 2 || len(a.Path) > maxPath+1 {
			return nil, fmt.Errorf("a drag's path needs 2 to %d points, not %d", maxPath+1, len(a.Path))
		}
		pts := make([]point, len(a.Path))
		for i, p := range a.Path {
			q, err := pixel(p.X, p.Y)
			if err != nil {
				return nil, err
			}
			pts[i] = *q
		}
		return []step{{kind: stepDrag, at: &pts[0], path: pts[1:]}}, nil
	case "keypress":
		combo, err := keyCombo(a.Keys)
		if err != nil {
			return nil, err
		}
		return []step{{kind: stepKey, text: combo}}, nil
	case "type":
		return []step{{kind: stepType, text: a.Text}}, nil
	case "wait":
		return []step{{kind: stepWait, dur: 2 * time.Second}}, nil
	case "scroll":
		p, err := at()
		if err != nil {
			return nil, err
		}
		var steps []step
		if a.ScrollY != 0 {
			steps = append(steps, step{kind: stepScroll, at: p, dir: pick(a.ScrollY > 0, "down", "up"), amount: notches(a.ScrollY)})
		}
		if a.ScrollX != 0 {
			steps = append(steps, step{kind: stepScroll, at: p, dir: pick(a.ScrollX > 0, "right", "left"), amount: notches(a.ScrollX)})
		}
		return steps, nil
	}
	return nil, fmt.Errorf("unknown action %q", clip(a.Type, 40))
}

// pixel is a point the model gave in pixels; one far off any screen is refused here, before
// the conversion to int could wrap it onto one.
func pixel(x, y float64) (*point, error) {
	if math.IsNaN(x) || math.IsNaN(y) || math.Abs(x) > 1e6 || math.Abs(y) > 1e6 {
		return nil, fmt.Errorf("(%g, %g) is off the screen", x, y)
	}
	return &point{int(x), int(y)}, nil
}

func pick(c bool, yes, no string) string {
	if c {
		return yes
	}
	return no
}

// notches are the wheel turns that scroll px pixels, about 100 a notch (the desktop caps them).
func notches(px float64) int {
	return int(min(math.Ceil(math.Abs(px)/100), 50))
}

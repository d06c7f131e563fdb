package computer

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"time"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"

	"massgen/internal/desktop"
	"massgen/internal/provider"
	"massgen/internal/tool"
)

// ClaudeModel is the model MassGen's claude_computer_use calls; preset_args.model changes it.
const ClaudeModel = "claude-sonnet-4-5"

const anthropicBase = "https://api.anthropic.com"

// ClaudeTool is MassGen's claude_computer_use under name: Claude carries out query on the
// agent's desktop with Anthropic's computer tool.
func ClaudeTool(name string, ds *Desktops) tool.Tool {
	return tool.Tool{
		Spec: provider.ToolSpec{Name: name, Description: claudeDoc, Parameters: taskSchema("query", nil)},
		Run:  func(ctx context.Context, args string) tool.Result { return ds.claude(ctx, args) },
	}
}

const claudeDoc = "Hand a task to Claude's computer use: it sees a virtual desktop with a web browser through screenshots " +
	"and clicks, types and scrolls until the task is done, then answers. Give the whole task in query."

// taskSchema is a tool's parameters: the task under key (MassGen's claude_computer_use calls
// it query, the others task; either is taken), the common ones, and extras.
func taskSchema(key string, extras map[string]any) map[string]any {
	props := map[string]any{
		key:                  map[string]any{"type": "string", "description": "The task to carry out on the computer."},
		"environment":        map[string]any{"type": "string", "enum": []string{"browser", "linux"}, "description": "browser or linux: both are a virtual desktop with Chromium."},
		"display_width":      map[string]any{"type": "integer", "description": "Screen width in pixels."},
		"display_height":     map[string]any{"type": "integer", "description": "Screen height in pixels."},
		"max_iterations":     map[string]any{"type": "integer", "description": fmt.Sprintf("Most model turns (at most %d).", maxIterations)},
		"url":                map[string]any{"type": "string", "description": "A page to open before the task starts."},
		"headless":           map[string]any{"type": "boolean", "description": "Accepted for MassGen's configs: the desktop is always virtual."},
		"browser_type":       map[string]any{"type": "string", "description": "chromium (the only one here)."},
		"environment_config": map[string]any{"type": "object", "description": "Accepted for MassGen's configs (Docker's container_name is refused)."},
	}
	maps.Copy(props, extras)
	return map[string]any{"type": "object", "properties": props, "required": []string{key}}
}

// claudeDefaults are MassGen's claude_computer_use defaults.
var claudeDefaults = defaults{width: 1024, height: 768, iterations: 25}

func (ds *Desktops) claude(ctx context.Context, raw string) tool.Result {
	a, b, d, refusal := ds.start(ctx, raw, Claude, "Anthropic", claudeDefaults)
	if refusal != "" {
		return tool.Errorf(refusal)
	}
	o := ds.o
	model := cmp.Or(a.Model, ClaudeModel)
	hc := cmp.Or(o.HTTPClient, http.DefaultClient)
	m := &meter{}
	client := anthropic.NewClient(aoption.WithoutEnvironmentDefaults(), aoption.WithoutOpenTelemetry(), aoption.WithAPIKey(b.APIKey),
		aoption.WithBaseURL(cmp.Or(b.BaseURL, anthropicBase)), aoption.WithHTTPClient(capped(hc, o.MaxResponseBytes, m)), aoption.WithMaxRetries(2))
	computerTool := anthropic.BetaToolUnionParamOfComputerUseTool20250124(int64(a.DisplayHeight), int64(a.DisplayWidth))
	computerTool.OfComputerUseTool20250124.DisplayNumber = anthropic.Int(1)
	msgs := []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock(a.Query))}
	price := pricing{backend: Claude, model: model, imageTokens: claudeImageTokens(a.DisplayWidth, a.DisplayHeight)}
	var spent provider.Usage
	var shots shotsSent // every screenshot stays in the conversation Claude is sent again
	result := func(r tool.Result) tool.Result { r.Spent = spent; return r }
	say := tool.Output(ctx)
	for turn := 1; turn <= a.MaxIterations; turn++ {
		m.call(shots, 0)
		msg, err := client.Beta.Messages.New(ctx, anthropic.BetaMessageNewParams{
			Model: anthropic.Model(model), MaxTokens: 4096, Messages: msgs,
			Tools: []anthropic.BetaToolUnionParam{computerTool},
			Betas: []anthropic.AnthropicBeta{anthropic.AnthropicBetaComputerUse2025_01_24},
		})
		if err != nil {
			// A call cut off after Claude got it (the run cancelled, the answer cut short) is
			// paid for all the same: estimated, and marked so.
			spent = spent.Add(m.cutOff(price))
			return result(tool.Errorf("Claude computer use: " + cleanErr(b, err)))
		}
		spent = spent.Add(claudeCost(price, msg.Usage))
		var text strings.Builder
		var results []anthropic.BetaContentBlockParamUnion
		for _, c := range msg.Content {
			switch {
			case c.Type == "text":
				text.WriteString(c.Text)
			case c.Type == "tool_use" && len(results) >= maxActions:
				// A model that asks for more at once than a person could check gets the
				// rest refused, and its screenshots cannot pile up in one turn.
				results = append(results, anthropic.NewBetaToolResultBlock(c.ID,
					fmt.Sprintf("not carried out: at most %d actions a turn; ask for the rest in the next turn", maxActions), true))
			case c.Type == "tool_use":
				results = append(results, ds.claudeAction(ctx, d, c.ID, c.Name, c.Input, say, &shots))
			}
		}
		switch {
		case msg.StopReason == anthropic.BetaStopReasonToolUse && len(results) > 0:
			msgs = append(msgs, msg.ToParam(), anthropic.NewBetaUserMessage(results...))
			continue
		case msg.StopReason == anthropic.BetaStopReasonEndTurn || msg.StopReason == anthropic.BetaStopReasonStopSequence:
			return result(answer(text.String()))
		default:
			return result(tool.Errorf(fmt.Sprintf("Claude stopped: %s; what it said: %s", msg.StopReason, clip(text.String(), 2000))))
		}
	}
	return result(tool.Errorf(fmt.Sprintf("reached max_iterations (%d) without finishing the task", a.MaxIterations)))
}

// answer is a model's final text as the tool's result.
func answer(text string) tool.Result {
	text = strings.TrimSpace(text)
	if text == "" {
		text = "Task completed"
	}
	return tool.Result{Content: clip(text, maxAnswer)}
}

// claudeAction runs one tool_use block and returns its tool_result: the screenshot as an
// image, anything else as text, an error as an error result for Claude to read.
func (ds *Desktops) claudeAction(ctx context.Context, d *desktop.Desktop, id, name string, input json.RawMessage, say tool.OutputFunc, shots *shotsSent) anthropic.BetaContentBlockParamUnion {
	if name != "computer" {
		return anthropic.NewBetaToolResultBlock(id, fmt.Sprintf("unknown tool %q: only computer is offered", name), true)
	}
	var in map[string]any
	if err := json.Unmarshal(input, &in); err != nil {
		return anthropic.NewBetaToolResultBlock(id, "the input is not a JSON object", true)
	}
	s, err := claudeStep(in)
	var png []byte
	var text string
	if err == nil {
		png, text, err = do(ctx, d, s)
	}
	if err != nil {
		say(fmt.Sprintf("computer %v: %v\n", in["action"], err))
		return anthropic.NewBetaToolResultBlock(id, err.Error(), true)
	}
	if png == nil {
		say(fmt.Sprintf("computer: %s\n", text))
		return anthropic.NewBetaToolResultBlock(id, text, false)
	}
	shot(ctx, ds.o.Browser.Dir, png)
	shots.add(png)
	say("computer: screenshot\n")
	img := anthropic.BetaImageBlockParam{Source: anthropic.BetaImageBlockParamSourceUnion{OfBase64: &anthropic.BetaBase64ImageSourceParam{
		Data: base64.StdEncoding.EncodeToString(png), MediaType: anthropic.BetaBase64ImageSourceMediaTypeImagePNG}}}
	return anthropic.BetaContentBlockParamUnion{OfToolResult: &anthropic.BetaToolResultBlockParam{ToolUseID: id,
		Content: []anthropic.BetaToolResultBlockParamContentUnion{{OfImage: &img}}}}
}

// claudeStep translates an action of Anthropic's computer tool, in screen pixels.
func claudeStep(in map[string]any) (step, error) {
	action, _ := in["action"].(string)
	xy := func(key string) (*point, error) {
		v, given := in[key]
		if !given {
			return nil, nil
		}
		c, ok := v.([]any)
		if !ok || len(c) != 2 {
			return nil, fmt.Errorf("%s needs %s as [x, y]", action, key)
		}
		x, ok1 := c[0].(float64)
		y, ok2 := c[1].(float64)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("%s must hold two numbers", key)
		}
		return &point{int(x), int(y)}, nil
	}
	str := func(key string) string { s, _ := in[key].(string); return s }
	secs := func() time.Duration { f, _ := in["duration"].(float64); return time.Duration(f * float64(time.Second)) }
	at, err := xy("coordinate")
	if err != nil {
		return step{}, err
	}
	click := func(button string, n int) (step, error) {
		return step{kind: stepClick, at: at, button: button, count: n}, nil
	}
	switch action {
	case "screenshot":
		return step{kind: stepScreenshot}, nil
	case "left_click":
		return click("left", 1)
	case "right_click":
		return click("right", 1)
	case "middle_click":
		return click("middle", 1)
	case "double_click":
		return click("left", 2)
	case "triple_click":
		return click("left", 3)
	case "mouse_move":
		if at == nil {
			return step{}, errors.New("mouse_move needs coordinate as [x, y]")
		}
		return step{kind: stepMove, at: at}, nil
	case "left_click_drag":
		from, err := xy("start_coordinate")
		if err != nil {
			return step{}, err
		}
		if at == nil {
			return step{}, errors.New("left_click_drag needs coordinate as [x, y]")
		}
		return step{kind: stepDrag, at: from, path: []point{*at}}, nil // from the pointer when nil
	case "left_mouse_down":
		return step{kind: stepMouseDown}, nil
	case "left_mouse_up":
		return step{kind: stepMouseUp}, nil
	case "type":
		return step{kind: stepType, text: str("text")}, nil
	case "key":
		return step{kind: stepKey, text: str("text")}, nil
	case "hold_key":
		return step{kind: stepHold, text: str("text"), dur: secs()}, nil
	case "scroll":
		n, _ := in["scroll_amount"].(float64)
		return step{kind: stepScroll, at: at, dir: str("scroll_direction"), amount: int(n)}, nil
	case "wait":
		return step{kind: stepWait, dur: secs()}, nil
	case "cursor_position":
		return step{kind: stepCursor}, nil
	}
	return step{}, fmt.Errorf("unknown action %q", action)
}

// claudeCost prices one call.
func claudeCost(p pricing, u anthropic.BetaUsage) provider.Usage {
	return priced(p, provider.Usage{InputTokens: u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		CachedInputTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens, OutputTokens: u.OutputTokens})
}

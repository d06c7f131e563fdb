package computer

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"

	"massgen/internal/desktop"
	"massgen/internal/provider"
	"massgen/internal/tool"
	"massgen/internal/usage"
)

// ClaudeModel is the model MassGen's claude_computer_use calls; preset_args.model changes it.
const ClaudeModel = "claude-sonnet-4-5"

const anthropicBase = "https://api.anthropic.com"

// ClaudeTool is MassGen's claude_computer_use under name: Claude carries out query on the
// agent's desktop with Anthropic's computer tool.
func ClaudeTool(name string, ds *Desktops) tool.Tool {
	return tool.Tool{
		Spec: provider.ToolSpec{Name: name, Description: claudeDoc, Parameters: taskSchema()},
		Run:  func(ctx context.Context, args string) tool.Result { return ds.claude(ctx, args) },
	}
}

const claudeDoc = "Hand a task to Claude's computer use: it sees a virtual desktop with a web browser through screenshots " +
	"and clicks, types and scrolls until the task is done, then answers. Give the whole task in query."

func taskSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"query":              map[string]any{"type": "string", "description": "The task to carry out on the computer."},
			"environment":        map[string]any{"type": "string", "enum": []string{"browser", "linux"}, "description": "browser or linux: both are a virtual desktop with Chromium."},
			"display_width":      map[string]any{"type": "integer", "description": "Screen width in pixels (default 1024)."},
			"display_height":     map[string]any{"type": "integer", "description": "Screen height in pixels (default 768)."},
			"max_iterations":     map[string]any{"type": "integer", "description": "Most model turns (default 25, at most 100)."},
			"url":                map[string]any{"type": "string", "description": "A page to open before the task starts."},
			"headless":           map[string]any{"type": "boolean", "description": "Accepted for MassGen's configs: the desktop is always virtual."},
			"browser_type":       map[string]any{"type": "string", "description": "chromium (the only one here)."},
			"environment_config": map[string]any{"type": "object", "description": "Accepted for MassGen's configs (Docker's container_name is refused)."},
		},
		"required": []string{"query"},
	}
}

func (ds *Desktops) claude(ctx context.Context, raw string) tool.Result {
	a, bad := decode(raw)
	if bad != "" {
		return tool.Errorf(bad)
	}
	o := ds.o
	if o.Backend.APIKey == "" {
		return keyError(o, "Anthropic")
	}
	model := a.Model
	if model == "" {
		model = ClaudeModel
	}
	d, err := ds.get(ctx, a.DisplayWidth, a.DisplayHeight)
	if err != nil {
		return tool.Errorf(fmt.Sprintf("the desktop: %v", err))
	}
	if a.URL != "" {
		if _, err := d.Browser().Navigate(ctx, a.URL); err != nil {
			return tool.Errorf(err.Error())
		}
	}
	base := o.Backend.BaseURL
	if base == "" {
		base = anthropicBase
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	m := &meter{}
	client := anthropic.NewClient(aoption.WithoutEnvironmentDefaults(), aoption.WithoutOpenTelemetry(), aoption.WithAPIKey(o.Backend.APIKey),
		aoption.WithBaseURL(base), aoption.WithHTTPClient(capped(hc, o.MaxResponseBytes, m)), aoption.WithMaxRetries(2))
	computerTool := anthropic.BetaToolUnionParamOfComputerUseTool20250124(int64(a.DisplayHeight), int64(a.DisplayWidth))
	computerTool.OfComputerUseTool20250124.DisplayNumber = anthropic.Int(1)
	msgs := []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock(a.Query))}
	var spent provider.Usage
	var shots shotsSent
	result := func(r tool.Result) tool.Result { r.Spent = spent; return r }
	say := tool.Output(ctx)
	for turn := 1; turn <= a.MaxIterations; turn++ {
		m.reset()
		msg, err := client.Beta.Messages.New(ctx, anthropic.BetaMessageNewParams{
			Model: anthropic.Model(model), MaxTokens: 4096, Messages: msgs,
			Tools: []anthropic.BetaToolUnionParam{computerTool},
			Betas: []anthropic.AnthropicBeta{anthropic.AnthropicBetaComputerUse2025_01_24},
		})
		if err != nil {
			// A call cut off after Claude got it (the run cancelled, the answer cut short) is
			// paid for all the same: estimated, and marked so.
			spent = spent.Add(m.cutOff(model, shots, a.DisplayWidth, a.DisplayHeight))
			return result(tool.Errorf("Claude computer use: " + cleanErr(o, err)))
		}
		spent = spent.Add(claudeCost(model, msg.Usage))
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
				results = append(results, ds.claudeAction(ctx, d, c.ID, c.Name, c.Input, say))
			}
		}
		switch {
		case msg.StopReason == anthropic.BetaStopReasonToolUse && len(results) > 0:
			shots.add(results)
			msgs = append(msgs, msg.ToParam(), anthropic.NewBetaUserMessage(results...))
			continue
		case msg.StopReason == anthropic.BetaStopReasonEndTurn || msg.StopReason == anthropic.BetaStopReasonStopSequence:
			answer := strings.TrimSpace(text.String())
			if answer == "" {
				answer = "Task completed"
			}
			return result(tool.Result{Content: clip(answer, maxAnswer)})
		default:
			return result(tool.Errorf(fmt.Sprintf("Claude stopped: %s; what it said: %s", msg.StopReason, clip(text.String(), 2000))))
		}
	}
	return result(tool.Errorf(fmt.Sprintf("reached max_iterations (%d) without finishing the task", a.MaxIterations)))
}

// claudeAction runs one tool_use block and returns its tool_result: the screenshot as an
// image, anything else as text, an error as an error result for Claude to read.
func (ds *Desktops) claudeAction(ctx context.Context, d *desktop.Desktop, id, name string, input json.RawMessage, say tool.OutputFunc) anthropic.BetaContentBlockParamUnion {
	if name != "computer" {
		return anthropic.NewBetaToolResultBlock(id, fmt.Sprintf("unknown tool %q: only computer is offered", name), true)
	}
	var in map[string]any
	if err := json.Unmarshal(input, &in); err != nil {
		return anthropic.NewBetaToolResultBlock(id, "the input is not a JSON object", true)
	}
	png, text, err := act(ctx, d, in)
	if err != nil {
		say(fmt.Sprintf("computer %v: %v\n", in["action"], err))
		return anthropic.NewBetaToolResultBlock(id, err.Error(), true)
	}
	if png == nil {
		say(fmt.Sprintf("computer: %s\n", text))
		return anthropic.NewBetaToolResultBlock(id, text, false)
	}
	shot(ctx, ds.o.Browser.Dir, png)
	say("computer: screenshot\n")
	img := anthropic.BetaImageBlockParam{Source: anthropic.BetaImageBlockParamSourceUnion{OfBase64: &anthropic.BetaBase64ImageSourceParam{
		Data: base64.StdEncoding.EncodeToString(png), MediaType: anthropic.BetaBase64ImageSourceMediaTypeImagePNG}}}
	return anthropic.BetaContentBlockParamUnion{OfToolResult: &anthropic.BetaToolResultBlockParam{ToolUseID: id,
		Content: []anthropic.BetaToolResultBlockParamContentUnion{{OfImage: &img}}}}
}

// claudeCost prices one call.
func claudeCost(model string, u anthropic.BetaUsage) provider.Usage {
	in := provider.Usage{InputTokens: u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		CachedInputTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens, OutputTokens: u.OutputTokens}
	if !usage.Known("claude", model) {
		return provider.Usage{Unknown: true}
	}
	return provider.Usage{CostUSD: usage.Cost("claude", model, in)}
}

package media

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"

	"massgen/internal/provider"
	"massgen/internal/provider/gemini"
	"massgen/internal/usage"
)

// The providers' default endpoints, as the agents' providers use them.
const (
	openaiBase    = "https://api.openai.com/v1"
	anthropicBase = "https://api.anthropic.com"
)

// part is one file sent with a prompt.
type part struct {
	kind, mime, name string
	data             []byte
}

// retries of 429, 5xx and connection errors, which the SDKs make honouring Retry-After.
const retries = 2

func (ts *toolset) openaiOptions(b Backend) []option.RequestOption {
	// The services are built without openai.NewClient, whose environment defaults
	// (OPENAI_API_KEY, OPENAI_ORG_ID, OPENAI_CUSTOM_HEADERS, ...) would change the key and the
	// headers behind the config's back; OPENAI_BASE_URL reaches b.BaseURL through app.BaseURL.
	base := b.BaseURL
	if base == "" {
		base = openaiBase
	}
	return []option.RequestOption{option.WithBaseURL(base), option.WithAPIKey(b.APIKey), option.WithHTTPClient(ts.hc),
		option.WithMaxRetries(retries)}
}

// ask sends prompt and parts to b's model and returns its text.
func (ts *toolset) ask(ctx context.Context, b Backend, model, prompt string, parts []part) (string, error) {
	var text string
	var err error
	switch b.Name {
	case "openai":
		text, err = ts.askOpenAI(ctx, b, model, prompt, parts)
	case "gemini":
		text, err = ts.askGemini(ctx, b, model, prompt, parts)
	case "claude":
		text, err = ts.askClaude(ctx, b, model, prompt, parts)
	default:
		return "", fmt.Errorf("no media provider %q", b.Name)
	}
	if err != nil {
		return "", ts.providerError(b, err)
	}
	if strings.TrimSpace(text) == "" {
		return "", fmt.Errorf("%s (%s) answered without any text", b.Name, model)
	}
	return clipText(text, maxText), nil
}

// providerError is err as the model may see it: without the key or the base URL's
// credentials, and short.
func (ts *toolset) providerError(b Backend, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: the call was cut off: %w", b.Name, err)
	}
	msg := err.Error()
	var oe *openai.Error
	if errors.As(err, &oe) && oe.Message != "" {
		// Its Error() is the status alone; the message says what was wrong with the request.
		msg = fmt.Sprintf("%d %s: %s", oe.StatusCode, http.StatusText(oe.StatusCode), oe.Message)
	}
	msg = ts.red.Message(msg)
	if len(msg) > maxErrorText {
		msg = msg[:maxErrorText] + "..."
	}
	return fmt.Errorf("%s API error: %s", b.Name, msg)
}

func dataURL(mime string, data []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)
}

func (ts *toolset) askOpenAI(ctx context.Context, b Backend, model, prompt string, parts []part) (string, error) {
	content := responses.ResponseInputMessageContentListParam{{OfInputText: &responses.ResponseInputTextParam{Text: prompt}}}
	for _, p := range parts {
		switch p.kind {
		case kindImage:
			content = append(content, responses.ResponseInputContentUnionParam{OfInputImage: &responses.ResponseInputImageParam{
				Detail: responses.ResponseInputImageDetailAuto, ImageURL: param.NewOpt(dataURL(p.mime, p.data))}})
		case kindFile:
			content = append(content, responses.ResponseInputContentUnionParam{OfInputFile: &responses.ResponseInputFileParam{
				FileData: param.NewOpt(dataURL(p.mime, p.data)), Filename: param.NewOpt(p.name)}})
		default:
			return "", fmt.Errorf("OpenAI's Responses API does not take %s here", p.kind)
		}
	}
	svc := responses.NewResponseService(ts.openaiOptions(b)...)
	resp, err := svc.New(ctx, responses.ResponseNewParams{
		Model: model,
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage(content, responses.EasyInputMessageRoleUser)}},
	})
	if err != nil {
		return "", err
	}
	bill(ctx, "openai", model, provider.Usage{InputTokens: resp.Usage.InputTokens, CachedInputTokens: resp.Usage.InputTokensDetails.CachedTokens,
		OutputTokens: resp.Usage.OutputTokens, ReasoningTokens: resp.Usage.OutputTokensDetails.ReasoningTokens}, sizeEstimate(prompt, parts, resp.OutputText()))
	return resp.OutputText(), nil
}

func (ts *toolset) transcribeOpenAI(ctx context.Context, b Backend, model string, p part) (string, error) {
	svc := openai.NewAudioTranscriptionService(ts.openaiOptions(b)...)
	resp, err := svc.New(ctx, openai.AudioTranscriptionNewParams{
		Model: model,
		File:  openai.File(strings.NewReader(string(p.data)), p.name, p.mime),
	})
	if err != nil {
		return "", ts.providerError(b, err)
	}
	// Transcription is billed by the minute of audio, which the price list does not hold.
	billUnpriced(ctx)
	if strings.TrimSpace(resp.Text) == "" {
		return "", fmt.Errorf("openai (%s) returned no transcription", model)
	}
	return clipText(resp.Text, maxText), nil
}

// geminiClient is a genai client for b. Every field the SDK would otherwise fill from
// GOOGLE_API_KEY, GOOGLE_GENAI_USE_VERTEXAI and GOOGLE_GEMINI_BASE_URL is set.
func (ts *toolset) geminiClient(ctx context.Context, b Backend) (*genai.Client, error) {
	base, version, err := gemini.SplitBaseURL(b.BaseURL)
	if err != nil {
		return nil, err
	}
	client, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: b.APIKey, Backend: genai.BackendGeminiAPI, HTTPClient: ts.hc,
		HTTPOptions: genai.HTTPOptions{BaseURL: base, APIVersion: version,
			RetryOptions: &genai.HTTPRetryOptions{Attempts: genai.Ptr[int32](retries + 1)}}})
	if err != nil {
		return nil, errors.New("client: " + ts.red.Message(err.Error()))
	}
	return client, nil
}

func (ts *toolset) askGemini(ctx context.Context, b Backend, model, prompt string, parts []part) (string, error) {
	client, err := ts.geminiClient(ctx, b)
	if err != nil {
		return "", err
	}
	ps := []*genai.Part{{Text: prompt}}
	for _, p := range parts {
		ps = append(ps, &genai.Part{InlineData: &genai.Blob{MIMEType: p.mime, Data: p.data}})
	}
	resp, err := client.Models.GenerateContent(ctx, model, []*genai.Content{{Role: genai.RoleUser, Parts: ps}}, nil)
	if err != nil {
		return "", err
	}
	var u provider.Usage
	if m := resp.UsageMetadata; m != nil {
		u = provider.Usage{InputTokens: int64(m.PromptTokenCount), CachedInputTokens: int64(m.CachedContentTokenCount),
			OutputTokens: int64(m.CandidatesTokenCount + m.ThoughtsTokenCount), ReasoningTokens: int64(m.ThoughtsTokenCount)}
	}
	bill(ctx, "gemini", model, u, sizeEstimate(prompt, parts, resp.Text()))
	return resp.Text(), nil
}

func (ts *toolset) askClaude(ctx context.Context, b Backend, model, prompt string, parts []part) (string, error) {
	base := b.BaseURL
	if base == "" {
		base = anthropicBase
	}
	client := anthropic.NewClient(aoption.WithoutEnvironmentDefaults(), aoption.WithoutOpenTelemetry(), aoption.WithAPIKey(b.APIKey),
		aoption.WithBaseURL(base), aoption.WithHTTPClient(ts.hc), aoption.WithMaxRetries(retries))
	var blocks []anthropic.ContentBlockParamUnion
	for _, p := range parts {
		enc := base64.StdEncoding.EncodeToString(p.data)
		switch p.kind {
		case kindImage:
			blocks = append(blocks, anthropic.NewImageBlockBase64(p.mime, enc))
		case kindFile:
			blocks = append(blocks, anthropic.NewDocumentBlock(anthropic.Base64PDFSourceParam{Data: enc}))
		default:
			return "", fmt.Errorf("Claude's Messages API does not take %s", p.kind)
		}
	}
	blocks = append(blocks, anthropic.NewTextBlock(prompt))
	msg, err := client.Messages.New(ctx, anthropic.MessageNewParams{Model: anthropic.Model(model), MaxTokens: 4096,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(blocks...)}})
	if err != nil {
		return "", err
	}
	var out strings.Builder
	for _, c := range msg.Content {
		if c.Type == "text" {
			out.WriteString(c.Text)
		}
	}
	bill(ctx, "claude", model, provider.Usage{InputTokens: msg.Usage.InputTokens + msg.Usage.CacheReadInputTokens + msg.Usage.CacheCreationInputTokens,
		CachedInputTokens: msg.Usage.CacheReadInputTokens, CacheWriteTokens: msg.Usage.CacheCreationInputTokens, OutputTokens: msg.Usage.OutputTokens},
		sizeEstimate(prompt, parts, out.String()))
	return out.String(), nil
}

// readAllCapped reads r up to max bytes; more is an error.
func readAllCapped(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("the generated file is larger than %d MiB", max>>20)
	}
	return data, nil
}

// sizeEstimate is a call's usage judged from what was sent and received, for a provider that
// reported none: about four bytes a token, files included.
func sizeEstimate(prompt string, parts []part, answer string) provider.Usage {
	in := len(prompt)
	for _, p := range parts {
		in += len(p.data)
	}
	return provider.Usage{InputTokens: usage.Tokens(in), OutputTokens: usage.Tokens(len(answer)), Estimated: true}
}

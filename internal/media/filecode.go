package media

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"massgen/internal/provider"
	"massgen/internal/usage"
)

// codeInterpreterFile has OpenAI make a file in its code interpreter (Responses API, tool
// code_interpreter in an automatic container): the model writes the file with the Python
// packages of OpenAI's sandbox, cites it in its answer (container_file_citation), and the file
// is downloaded from the container (GET /containers/{id}/files/{file}/content). It returns the
// file, the model's reply and what the call cost: tokens and the container's fee.
func (ts *toolset) codeInterpreterFile(ctx context.Context, b Backend, model, prompt, filename string) ([]byte, string, provider.Usage, error) {
	ext := filename[strings.LastIndexByte(filename, '.')+1:]
	instructions := fmt.Sprintf("Build the PowerPoint deck the user describes with python-pptx in the code interpreter and save it as "+
		"/mnt/data/%s: one slide per '# Title' or '## Title' (or per part between --- lines), '- ' lines as bullets and indented ones "+
		"one level down; a first slide with a title alone is a title slide. Keep the user's wording. Then reply with one short "+
		"sentence naming the file.", filename)
	ci := responses.ToolCodeInterpreterParam{Container: responses.ToolCodeInterpreterContainerUnionParam{
		OfCodeInterpreterToolAuto: &responses.ToolCodeInterpreterContainerCodeInterpreterContainerAutoParam{}}}
	svc := responses.NewResponseService(ts.openaiOptions(b)...)
	resp, err := svc.New(ctx, responses.ResponseNewParams{Model: model, Instructions: param.NewOpt(instructions),
		Input:      responses.ResponseNewParamsInputUnion{OfString: param.NewOpt(prompt)},
		Tools:      []responses.ToolUnionParam{{OfCodeInterpreter: &ci}},
		ToolChoice: responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: param.NewOpt(responses.ToolChoiceOptionsRequired)}})
	if err != nil {
		return nil, "", provider.Usage{}, ts.providerError(b, err)
	}
	u := provider.Usage{InputTokens: resp.Usage.InputTokens, CachedInputTokens: resp.Usage.InputTokensDetails.CachedTokens,
		OutputTokens: resp.Usage.OutputTokens}
	containers := 0
	for _, o := range resp.Output {
		if o.Type == "code_interpreter_call" {
			containers = 1 // one automatic container per request
		}
	}
	spent := tokenSpend(model, u, float64(containers)*usage.CodeInterpreterFee)
	text := resp.OutputText()
	container, file := citedFile(resp, ext)
	if file == "" {
		return nil, text, spent, fmt.Errorf("openai (%s) made no .%s file in its code interpreter (it said: %s); try again, or "+
			"make md and convert it", model, ext, clip(ts.red.Message(cmpOr(strings.TrimSpace(text), "nothing")), 300))
	}
	files := openai.NewContainerFileContentService(ts.openaiOptions(b)...)
	dl, err := files.Get(ctx, container, file)
	if err != nil {
		return nil, text, spent, ts.providerError(b, fmt.Errorf("downloading %s: %w", filename, err))
	}
	defer dl.Body.Close()
	data, err := io.ReadAll(io.LimitReader(dl.Body, ts.fileCap+1))
	switch {
	case err != nil:
		return nil, text, spent, fmt.Errorf("downloading %s: %v", filename, err)
	case int64(len(data)) > ts.fileCap:
		return nil, text, spent, fmt.Errorf("%s is larger than %d MiB", filename, ts.fileCap>>20)
	case !bytes.HasPrefix(data, []byte("PK\x03\x04")):
		// pptx (like docx and xlsx) is a zip archive.
		return nil, text, spent, fmt.Errorf("openai's container sent something that is not a .%s file (%s)", ext, strings.TrimSpace(clip(string(data), 60)))
	}
	return data, text, spent, nil
}

// citedFile finds the file with extension ext that the reply cites from its container.
func citedFile(resp *responses.Response, ext string) (container, file string) {
	for _, o := range resp.Output {
		if o.Type != "message" {
			continue
		}
		for _, c := range o.Content {
			for _, a := range c.Annotations {
				if a.Type == "container_file_citation" && a.ContainerID != "" && a.FileID != "" &&
					strings.HasSuffix(strings.ToLower(a.Filename), "."+ext) {
					return a.ContainerID, a.FileID
				}
			}
		}
	}
	return "", ""
}

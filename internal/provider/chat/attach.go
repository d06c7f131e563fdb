package chat

import (
	"errors"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"

	"massgen/internal/provider"
)

// The task's files (upload_files) on Chat Completions, as MassGen's formatter sends them:
// images as image_url parts, audio as input_audio parts (wav or mp3), videos as video_url
// parts (Qwen-VL and vLLM read them; OpenAI does not), each with the file as a data: URL or
// base64, before the text of the first user message. Whether a model reads them is the
// server's business: it answers a model that cannot with an error, which names the model.

// audioFormats are the formats input_audio names.
var audioFormats = map[string]string{"audio/wav": "wav", "audio/mpeg": "mp3"}

// CheckAttachments refuses, before the session starts, the files Chat Completions cannot
// carry: documents (there is no file search) and audio other than wav and mp3.
func CheckAttachments(backend string, files []provider.Attachment) error {
	for _, a := range files {
		switch a.Kind {
		case provider.AttachImage, provider.AttachVideo:
		case provider.AttachAudio:
			if audioFormats[a.MIME] == "" {
				return provider.AttachmentError(backend, a, "input_audio takes wav and mp3; convert it")
			}
		default:
			return provider.AttachmentError(backend, a, "Chat Completions has no file search; use type openai (file search), claude or gemini for documents")
		}
	}
	return nil
}

// attach puts the files before the text of the first user message of msgs.
func attach(backend string, msgs []openai.ChatCompletionMessageParamUnion, req provider.Request) error {
	if len(req.FileSearch) > 0 {
		return &provider.Error{Provider: backend, Fatal: true, Err: errors.New("upload_files: Chat Completions has no file search")}
	}
	if len(req.Attachments) == 0 {
		return nil
	}
	if err := CheckAttachments(backend, req.Attachments); err != nil {
		return err
	}
	var parts []openai.ChatCompletionContentPartUnionParam
	for _, a := range req.Attachments {
		switch a.Kind {
		case provider.AttachImage:
			parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: a.DataURL()}))
		case provider.AttachAudio:
			parts = append(parts, openai.InputAudioContentPart(openai.ChatCompletionContentPartInputAudioInputAudioParam{
				Data: a.Base64(), Format: audioFormats[a.MIME]}))
		case provider.AttachVideo:
			// Not in the SDK's union: the part is written as the servers that read video want it.
			parts = append(parts, param.Override[openai.ChatCompletionContentPartUnionParam](map[string]any{
				"type": "video_url", "video_url": map[string]any{"url": a.DataURL()}}))
		}
	}
	for _, m := range msgs {
		u := m.OfUser
		if u == nil {
			continue
		}
		if u.Content.OfString.Valid() {
			parts = append(parts, openai.TextContentPart(u.Content.OfString.Value))
		} else {
			parts = append(parts, u.Content.OfArrayOfContentParts...)
		}
		u.Content = openai.ChatCompletionUserMessageParamContentUnion{OfArrayOfContentParts: parts}
		return nil
	}
	return &provider.Error{Provider: backend, Fatal: true, Err: errors.New("upload_files: the request has no user message to carry the files")}
}

package openai

import (
	"fmt"

	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"massgen/internal/provider"
)

// The task's files (upload_files) on the Responses API: images go inline, as input_image
// parts of the first user message; documents go into a vector store for the session
// (filesearch.go), which the file_search tool reads. The API takes no audio or video input.

// maxImageBytes is the Responses API's bound on the images of one request (50 MB).
const maxImageBytes = 50 << 20

// imageTypes are the image formats the API reads.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/webp": true, "image/gif": true}

// CheckAttachments refuses, before the session starts, the files the Responses API cannot
// take inline: audio, video, image formats it does not read, images over its request bound.
// Documents are not sent inline but uploaded for file search (FileSearch).
func CheckAttachments(files []provider.Attachment) error {
	var images int64
	for _, a := range files {
		switch a.Kind {
		case provider.AttachImage:
			if !imageTypes[a.MIME] {
				return provider.AttachmentError("openai", a, "OpenAI reads PNG, JPEG, WEBP and GIF images; convert it")
			}
			images += int64(len(a.Data))
		case provider.AttachDocument:
		case provider.AttachAudio:
			return provider.AttachmentError("openai", a, "the Responses API takes no audio input; use type chatcompletion with an audio model (gpt-4o-audio-preview), or gemini")
		default:
			return provider.AttachmentError("openai", a, "the Responses API takes no video; use gemini, or a chatcompletion server that reads video (Qwen-VL)")
		}
	}
	if images > maxImageBytes {
		return &provider.Error{Provider: "openai", Fatal: true,
			Err: fmt.Errorf("upload_files: the images add up to %s, over the %s OpenAI takes in one request; send fewer or smaller ones",
				provider.MB(images), provider.MB(maxImageBytes))}
	}
	return nil
}

// attach puts the images before the text of the first user message of input. Documents are
// expected in the vector store, so one here is an error, like any file the API cannot take.
func attach(backend string, input responses.ResponseInputParam, files []provider.Attachment) error {
	if len(files) == 0 {
		return nil
	}
	if err := CheckAttachments(files); err != nil {
		return err
	}
	var parts responses.ResponseInputMessageContentListParam
	for _, a := range files {
		if a.Kind == provider.AttachDocument {
			return provider.AttachmentError(backend, a, "documents reach OpenAI through file search, uploaded before the session")
		}
		parts = append(parts, responses.ResponseInputContentUnionParam{OfInputImage: &responses.ResponseInputImageParam{
			ImageURL: param.NewOpt(a.DataURL()), Detail: responses.ResponseInputImageDetailAuto,
		}})
	}
	for _, it := range input {
		m := it.OfMessage
		if m == nil || m.Role != responses.EasyInputMessageRoleUser {
			continue
		}
		if m.Content.OfString.Valid() {
			parts = append(parts, responses.ResponseInputContentUnionParam{OfInputText: &responses.ResponseInputTextParam{Text: m.Content.OfString.Value}})
		}
		m.Content = responses.EasyInputMessageContentUnionParam{OfInputItemContentList: parts}
		return nil
	}
	return &provider.Error{Provider: backend, Fatal: true, Err: fmt.Errorf("upload_files: the request has no user message to carry the files")}
}

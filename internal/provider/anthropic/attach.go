package anthropic

import (
	"errors"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"massgen/internal/provider"
)

// The task's files (upload_files) on the Messages API: images as base64 image blocks and
// documents as document blocks (a PDF as base64, a text file as plain text), before the text
// of the first user message, where the cache breakpoint of the shared prefix covers them.
// Claude takes no audio or video. MassGen uploads documents through Claude's Files API (a
// beta); inline blocks read the same and leave nothing behind to delete.

// Claude's bounds: 5 MB per image, 32 MB per request (the JSON body, base64 included).
const (
	maxImageBytes   = 5 << 20
	maxRequestBytes = 32 << 20
)

// imageTypes are the image formats Claude reads.
var imageTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

// CheckAttachments refuses, before the session starts, the files Claude cannot take: audio,
// video, image formats it does not read, Office documents, and what exceeds its bounds.
func CheckAttachments(backend string, files []provider.Attachment) error {
	for _, a := range files {
		switch a.Kind {
		case provider.AttachImage:
			if !imageTypes[a.MIME] {
				return provider.AttachmentError(backend, a, "Claude reads JPEG, PNG, GIF and WEBP images; convert it")
			}
			if len(a.Data) > maxImageBytes {
				return provider.AttachmentError(backend, a, fmt.Sprintf("it is %s; Claude takes images up to %s", provider.MB(int64(len(a.Data))), provider.MB(maxImageBytes)))
			}
		case provider.AttachDocument:
			if a.MIME != "application/pdf" && !a.Text() {
				return provider.AttachmentError(backend, a, "Claude reads PDF and text documents; convert it to PDF")
			}
		default:
			return provider.AttachmentError(backend, a, "Claude takes images and documents only; use gemini for audio and video")
		}
	}
	return provider.CheckAttachmentTotal(backend, "Claude takes", files, maxRequestBytes)
}

// attachBlocks are the files as content blocks.
func attachBlocks(files []provider.Attachment) []sdk.ContentBlockParamUnion {
	var out []sdk.ContentBlockParamUnion
	for _, a := range files {
		var b sdk.ContentBlockParamUnion
		switch {
		case a.Kind == provider.AttachImage:
			b = sdk.NewImageBlockBase64(a.MIME, a.Base64())
		case a.Text():
			b = sdk.NewDocumentBlock(sdk.PlainTextSourceParam{Data: string(a.Data)})
		default:
			b = sdk.NewDocumentBlock(sdk.Base64PDFSourceParam{Data: a.Base64()})
		}
		if d := b.OfDocument; d != nil {
			d.Title = sdk.String(a.Name)
		}
		out = append(out, b)
	}
	return out
}

// attach puts the files before the blocks of the first user message of msgs.
func attach(backend string, msgs []sdk.MessageParam, req provider.Request) error {
	if len(req.FileSearch) > 0 {
		return &provider.Error{Provider: backend, Fatal: true, Err: errors.New("upload_files: Claude has no vector-store file search")}
	}
	if len(req.Attachments) == 0 {
		return nil
	}
	if err := CheckAttachments(backend, req.Attachments); err != nil {
		return err
	}
	for i := range msgs {
		if u := msgs[i].OfUser; u != nil {
			u.Content = append(attachBlocks(req.Attachments), u.Content...)
			return nil
		}
	}
	return &provider.Error{Provider: backend, Fatal: true, Err: errors.New("upload_files: the request has no user message to carry the files")}
}

package gemini

import (
	"errors"

	"google.golang.org/genai"

	"massgen/internal/provider"
)

// The task's files (upload_files) on generateContent: every kind as an inlineData part before
// the text of the first user content (MassGen's Gemini backend does not take upload_files;
// Gemini reads images, audio, video, PDFs and text inline). Inline data is bounded by the
// request size; larger files would need the File API, which this build does not use.

// maxRequestBytes is Gemini's bound on a request with inline data (20 MB, base64 included).
const maxRequestBytes = 20 << 20

// imageTypes are the image formats Gemini reads.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/webp": true, "image/heic": true, "image/heif": true}

// CheckAttachments refuses, before the session starts, the files Gemini cannot take inline:
// image formats it does not read, Office documents, and more than a request holds.
func CheckAttachments(backend string, files []provider.Attachment) error {
	for _, a := range files {
		switch a.Kind {
		case provider.AttachImage:
			if !imageTypes[a.MIME] {
				return provider.AttachmentError(backend, a, "Gemini reads PNG, JPEG, WEBP, HEIC and HEIF images; convert it")
			}
		case provider.AttachDocument:
			if a.MIME != "application/pdf" && !a.Text() {
				return provider.AttachmentError(backend, a, "Gemini reads PDF and text documents; convert it to PDF")
			}
		}
	}
	return provider.CheckAttachmentTotal(backend, "Gemini takes inline", files, maxRequestBytes)
}

// attach puts the files before the parts of the first user content.
func attach(backend string, contents []*genai.Content, req provider.Request) error {
	if len(req.FileSearch) > 0 {
		return &provider.Error{Provider: backend, Fatal: true, Err: errors.New("upload_files: Gemini has no vector-store file search")}
	}
	if len(req.Attachments) == 0 {
		return nil
	}
	if err := CheckAttachments(backend, req.Attachments); err != nil {
		return err
	}
	for _, c := range contents {
		if c.Role != genai.RoleUser {
			continue
		}
		parts := make([]*genai.Part, 0, len(req.Attachments)+len(c.Parts))
		for _, a := range req.Attachments {
			mime := a.MIME
			if a.Text() {
				mime = "text/plain"
			}
			parts = append(parts, &genai.Part{InlineData: &genai.Blob{MIMEType: mime, Data: a.Data}})
		}
		c.Parts = append(parts, c.Parts...)
		return nil
	}
	return &provider.Error{Provider: backend, Fatal: true, Err: errors.New("upload_files: the request has no user content to carry the files")}
}

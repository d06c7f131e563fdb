package provider

import (
	"encoding/base64"
	"fmt"
	"strings"
)

// Files sent with the task (MassGen's upload_files) reach a backend as Request.Attachments,
// read and checked before the session starts. Each backend puts them in the first user message
// as its API's content parts, before the task's text, so that they sit in the prefix every
// call repeats and the prompt cache keeps. Documents for OpenAI go into a vector store instead,
// which Request.FileSearch names.

// Kinds of Attachment.
const (
	AttachImage    = "image"
	AttachAudio    = "audio"
	AttachVideo    = "video"
	AttachDocument = "document" // a PDF or a text file
)

// Attachment is one file sent with the task.
type Attachment struct {
	Kind string
	// MIME is what the bytes are (sniffed for media; application/pdf or text/plain for
	// documents, whatever the extension, except the Office formats only file search reads).
	MIME string
	// Name is the file's base name, for messages and the APIs that take a file name.
	Name string
	Data []byte
}

// DataURL is the file as a data: URL (image_url, input_image, video_url parts).
func (a Attachment) DataURL() string {
	return "data:" + a.MIME + ";base64," + base64.StdEncoding.EncodeToString(a.Data)
}

// Base64 is the file's bytes in standard base64.
func (a Attachment) Base64() string { return base64.StdEncoding.EncodeToString(a.Data) }

// Base64Size is how many bytes the file takes in a JSON body once base64-encoded.
func (a Attachment) Base64Size() int64 { return int64(base64.StdEncoding.EncodedLen(len(a.Data))) }

// Text reports whether a document is plain text (not a PDF or an Office file).
func (a Attachment) Text() bool {
	return a.Kind == AttachDocument && strings.HasPrefix(a.MIME, "text/")
}

// FirstUser is the index of the first user message of msgs (the task), or -1.
func FirstUser(msgs []Message) int {
	for i, m := range msgs {
		if m.Role == RoleUser {
			return i
		}
	}
	return -1
}

// AttachmentError is the fatal error of an attachment a backend cannot send: retrying cannot
// help. The config validator refuses what a backend type cannot take; this is the last guard.
func AttachmentError(backend string, a Attachment, why string) *Error {
	return &Error{Provider: backend, Fatal: true,
		Err: fmt.Errorf("upload_files: %s (%s, %s) cannot be sent: %s", a.Name, a.Kind, a.MIME, why)}
}

// MB formats a byte count for messages: in MB (MiB), or in KB below one.
func MB(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}

// CheckAttachmentTotal refuses files whose base64 encoding together exceeds max, the most the
// service (named for the message, "Claude takes") accepts in one request.
func CheckAttachmentTotal(backend, service string, files []Attachment, max int64) error {
	var total int64
	for _, a := range files {
		total += a.Base64Size()
	}
	if total <= max {
		return nil
	}
	return &Error{Provider: backend, Fatal: true,
		Err: fmt.Errorf("upload_files: the files take %s encoded, over the %s %s in one request; send fewer or smaller ones",
			MB(total), MB(max), service)}
}

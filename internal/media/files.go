package media

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
)

// Kinds of media a file holds.
const (
	kindImage = "image"
	kindAudio = "audio"
	kindVideo = "video"
	kindFile  = "file" // a document: PDF or text
)

// Input caps, per file, below what the providers accept inline (OpenAI: 20 MB per image,
// 25 MB per audio file; Gemini: 20 MB per request; Claude: 32 MB per request, 5 MB per image
// and more only through its Files API, which this build does not use).
var maxInput = map[string]int64{
	kindImage: 18 << 20,
	kindAudio: 25 << 20,
	kindVideo: 20 << 20,
	kindFile:  20 << 20,
}

// Output caps: what a provider may send back.
const (
	maxResponseBody = 64 << 20 // one HTTP response body (a generated image arrives as base64)
	maxGenerated    = 40 << 20 // one generated file
	maxText         = 64 << 10 // the text of an analysis returned to the model
	maxPrompt       = 32 << 10 // a prompt the model sends
	maxSpeechInput  = 4096     // characters OpenAI's speech endpoint takes
	maxBatch        = 8        // inputs or prompts of one batch call
	maxConcurrent   = 4        // batch items in flight
	defaultMaxChars = 50000    // understand_file's text cap (MassGen's default)
	maxMaxChars     = 200000   // the largest max_chars accepted
	maxImagesPerAsk = 8        // images sent together in one understand_image call
	maxStoragePath  = 1 << 10  // storage_path length
	maxFileNameText = 30       // characters of the prompt in a generated file's name
	maxErrorText    = 2000     // a provider's error message, as returned to the model
	maxNameLen      = 64       // a name in understand_image's images mapping
	maxAudioFiles   = 8        // audio_paths of one understand_audio call
	maxSpeechVoice  = 64       // a voice name
	maxModelName    = 200      // a model name the model sends
	maxTextFileScan = 20 << 20 // a text file understand_file reads before cutting to max_chars
)

// extensions maps a file extension to its kind and MIME type (MassGen's MEDIA_TYPE_EXTENSIONS
// and understand_file's documents).
var extensions = map[string]struct{ kind, mime string }{
	".png": {kindImage, "image/png"}, ".jpg": {kindImage, "image/jpeg"}, ".jpeg": {kindImage, "image/jpeg"},
	".webp": {kindImage, "image/webp"}, ".gif": {kindImage, "image/gif"}, ".bmp": {kindImage, "image/bmp"},
	".mp3": {kindAudio, "audio/mpeg"}, ".wav": {kindAudio, "audio/wav"}, ".m4a": {kindAudio, "audio/mp4"},
	".ogg": {kindAudio, "audio/ogg"}, ".flac": {kindAudio, "audio/flac"}, ".aac": {kindAudio, "audio/aac"},
	".opus": {kindAudio, "audio/ogg"},
	".mp4":  {kindVideo, "video/mp4"}, ".mov": {kindVideo, "video/quicktime"}, ".avi": {kindVideo, "video/x-msvideo"},
	".mkv": {kindVideo, "video/x-matroska"}, ".webm": {kindVideo, "video/webm"},
	".pdf": {kindFile, "application/pdf"},
}

// officeExt are documents MassGen extracts with Python packages; they are refused by name.
var officeExt = map[string]bool{".docx": true, ".xlsx": true, ".xls": true, ".pptx": true, ".doc": true, ".ppt": true}

// kindOf returns the kind and MIME type a path's extension names; ok is false for an
// extension that is not media (a text file for understand_file).
func kindOf(path string) (kind, mime string, ok bool) {
	e, ok := extensions[strings.ToLower(filepath.Ext(path))]
	return e.kind, e.mime, ok
}

// supported lists the extensions of a kind, for messages.
func supported(kind string) string {
	var out []string
	for _, ext := range []string{".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp", ".mp3", ".wav", ".m4a", ".ogg", ".flac",
		".aac", ".opus", ".mp4", ".mov", ".avi", ".mkv", ".webm", ".pdf"} {
		if extensions[ext].kind == kind {
			out = append(out, ext[1:])
		}
	}
	return strings.Join(out, ", ")
}

// sniff checks that data is what its extension says. The content is sniffed
// (http.DetectContentType): a file whose content is clearly of another kind, or text, is
// refused, since the provider would reject it or misread it. Formats the sniffer does not
// know (mp3 without ID3, m4a, flac, mov, mkv) are taken by their extension.
func sniff(path, kind, mime string, data []byte) (string, error) {
	got := http.DetectContentType(data)
	got, _, _ = strings.Cut(got, ";")
	family := func(m string) string {
		switch {
		case m == "application/ogg":
			return kindAudio
		case m == "application/pdf":
			return kindFile
		case strings.HasPrefix(m, "image/"):
			return kindImage
		case strings.HasPrefix(m, "audio/"):
			return kindAudio
		case strings.HasPrefix(m, "video/"):
			return kindVideo
		case strings.HasPrefix(m, "text/"):
			return "text"
		}
		return ""
	}
	switch f := family(got); {
	case len(data) == 0:
		return "", fmt.Errorf("%s is empty", path)
	case f == "":
		return mime, nil
	case f == "text":
		return "", fmt.Errorf("%s holds text (sniffed %s), not %s%s", path, got, article(kind), kind)
	case f != kind && !(kind == kindVideo && f == kindAudio): // a webm or mp4 of sound alone sniffs as either
		return "", fmt.Errorf("%s holds %s%s (sniffed %s), not the %s its extension says", path, article(f), f, got, kind)
	case kind == kindImage && got != mime:
		// Providers decode by the declared type: declare what the bytes are.
		return got, nil
	}
	return mime, nil
}

func article(kind string) string {
	if kind == kindImage || kind == kindAudio {
		return "an "
	}
	return "a "
}

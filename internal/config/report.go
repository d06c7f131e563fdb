package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Report is everything validation found in one config. A config with no Errors can run;
// Warnings never stop a run (`--validate --strict` may treat them as failures).
type Report struct {
	Errors   []Issue
	Warnings []Issue
}

// OK reports whether there are no errors (warnings are allowed).
func (r Report) OK() bool { return len(r.Errors) == 0 }

// Err returns nil when there are no errors. Otherwise it returns an error whose text is every
// error issue, one per line; errors.As with a *Issue target finds the first of them.
func (r Report) Err() error {
	if len(r.Errors) == 0 {
		return nil
	}
	errs := make([]error, len(r.Errors))
	for i := range r.Errors {
		errs[i] = r.Errors[i]
	}
	return errors.Join(errs...)
}

// Text renders the report for people: one line per issue, errors first, each prefixed
// "error: " or "warning: ", then a closing line ("Configuration is valid!" when there are
// no errors).
func (r Report) Text() string {
	var b strings.Builder
	for _, is := range r.Errors {
		b.WriteString("error: ")
		b.WriteString(is.String())
		b.WriteByte('\n')
	}
	for _, is := range r.Warnings {
		b.WriteString("warning: ")
		b.WriteString(is.String())
		b.WriteByte('\n')
	}
	if r.OK() {
		b.WriteString("Configuration is valid!\n")
	} else {
		fmt.Fprintf(&b, "Configuration is invalid: %s, %s.\n",
			plural(len(r.Errors), "error"), plural(len(r.Warnings), "warning"))
	}
	return b.String()
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// jsonIssue is one issue in MassGen's validation-result shape.
type jsonIssue struct {
	Message    string  `json:"message"`
	Location   string  `json:"location"`
	Suggestion *string `json:"suggestion"`
	File       string  `json:"file"`
	Line       int     `json:"line"`
	Column     int     `json:"column"`
}

type jsonReport struct {
	Valid        bool        `json:"valid"`
	ErrorCount   int         `json:"error_count"`
	WarningCount int         `json:"warning_count"`
	Errors       []jsonIssue `json:"errors"`
	Warnings     []jsonIssue `json:"warnings"`
}

// JSON renders the report in MassGen's shape: {"valid", "error_count", "warning_count",
// "errors": [{"message", "location", "suggestion", "file", "line", "column"}], "warnings"}.
// A missing suggestion is null; unknown positions are 0.
func (r Report) JSON() []byte {
	conv := func(in []Issue) []jsonIssue {
		out := make([]jsonIssue, 0, len(in))
		for _, is := range in {
			j := jsonIssue{Message: is.Message, Location: is.Location, File: is.File, Line: is.Line, Column: is.Column}
			if is.Suggestion != "" {
				s := is.Suggestion
				j.Suggestion = &s
			}
			out = append(out, j)
		}
		return out
	}
	data, err := indentPlain(jsonReport{
		Valid:        r.OK(),
		ErrorCount:   len(r.Errors),
		WarningCount: len(r.Warnings),
		Errors:       conv(r.Errors),
		Warnings:     conv(r.Warnings),
	})
	if err != nil { // cannot happen: only strings and ints
		return []byte(`{"valid":false}`)
	}
	return data
}

// indentPlain is json.MarshalIndent without HTML escaping: a report is read by people and
// scripts, and a message quoting `<ORIGINAL MESSAGE>` should read as written.
func indentPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// String formats the issue as FILE:LINE:COL: LOCATION: MESSAGE (SUGGESTION), leaving out the
// parts that are unknown.
func (is Issue) String() string {
	var b strings.Builder
	if is.File != "" {
		b.WriteString(is.File)
		b.WriteByte(':')
	}
	if is.Line > 0 {
		fmt.Fprintf(&b, "%d:%d:", is.Line, is.Column)
	}
	if b.Len() > 0 {
		b.WriteByte(' ')
	}
	if is.Location != "" {
		b.WriteString(is.Location)
		b.WriteString(": ")
	}
	b.WriteString(is.Message)
	if is.Suggestion != "" {
		b.WriteString(" (")
		b.WriteString(is.Suggestion)
		b.WriteByte(')')
	}
	return b.String()
}

// Error makes an Issue usable as an error; the text is String().
func (is Issue) Error() string { return is.String() }

package durable

import (
	"fmt"
	"strings"
	"unicode"
)

// Version names the code a worker runs as Temporal's Worker Deployment Version: a deployment
// (the workers of one task queue, across upgrades) and a build id (one build of massgen). A
// session's workflow stays pinned to the version that first ran it, because its coordination
// must replay on the code that wrote its history; new sessions go to the deployment's current
// version.
type Version struct {
	Deployment string
	BuildID    string
}

// IsZero reports whether v is unset: an unversioned worker.
func (v Version) IsZero() bool { return v == Version{} }

// String is the version as Temporal writes it, deployment:build-id.
func (v Version) String() string { return v.Deployment + ":" + v.BuildID }

// maxVersionField bounds a deployment name and a build id: Temporal builds workflow IDs from
// both and caps those at 1,000 bytes by default.
const maxVersionField = 200

// Check says what to fix in v before Temporal refuses it less clearly: both parts set, at most
// 200 bytes of printable characters without spaces or quotes (a version is quoted in
// visibility queries), not starting with "__" (reserved by Temporal), and a deployment name
// without "." or ":" (they separate it from the build id).
func (v Version) Check() error {
	if v.Deployment == "" || v.BuildID == "" {
		return fmt.Errorf("a worker version needs both --deployment NAME and --build-id ID (got %q and %q)", v.Deployment, v.BuildID)
	}
	for _, f := range []struct{ flag, val, forbid string }{
		{"--deployment", v.Deployment, ".:"},
		{"--build-id", v.BuildID, ""},
	} {
		switch {
		case len(f.val) > maxVersionField:
			return fmt.Errorf("%s is %d bytes long: at most %d", f.flag, len(f.val), maxVersionField)
		case strings.HasPrefix(f.val, "__"):
			return fmt.Errorf("%s %q: names starting with __ are Temporal's own", f.flag, f.val)
		case f.forbid != "" && strings.ContainsAny(f.val, f.forbid):
			return fmt.Errorf("%s %q: a deployment name cannot contain . or : (they separate it from the build id)", f.flag, f.val)
		case strings.IndexFunc(f.val, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0,
			strings.ContainsAny(f.val, "'\"`\\"):
			return fmt.Errorf("%s %q: use letters, digits and punctuation, without spaces, quotes or backslashes", f.flag, f.val)
		}
	}
	return nil
}

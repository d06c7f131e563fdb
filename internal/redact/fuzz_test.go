package redact

import (
	"strings"
	"testing"
)

// leak returns a MinSubstring-byte run of secret that out still holds, or "".
func leak(out, secret string) string {
	for i := 0; i+MinSubstring <= len(secret); i++ {
		if w := secret[i : i+MinSubstring]; strings.Contains(out, w) {
			return w
		}
	}
	return ""
}

// wholeToken reports whether out holds secret as a whole token.
func wholeToken(out, secret string) bool {
	for off := 0; off < len(out); {
		i := strings.Index(out[off:], secret)
		if i < 0 {
			return false
		}
		s, e := off+i, off+i+len(secret)
		if (s == 0 || !keyish(out[s-1])) && (e == len(out) || !keyish(out[e])) {
			return true
		}
		off = s + 1
	}
	return false
}

// FuzzRedact: whatever the text and however it is split, what comes out never holds the secret
// or a MinSubstring-byte run of it (a short secret: never as a whole token), String and Stream
// never panic, and text without the secret's bytes comes back unchanged.
func FuzzRedact(f *testing.F) {
	f.Add(key, "Incorrect API key provided: ", ".", 3, 7)
	f.Add(key, "masked sk-abc***", "6789 there", 0, 1)
	f.Add("abc123", "looking ", " for it", 2, 5)
	f.Add("key", "monkey key keys", "", 1, 1)
	f.Add("AIzaSyD-0123456789abcdefghij", "(", ")", 10, 3)
	f.Fuzz(func(t *testing.T, secret, before, after string, drop, split int) {
		secret = strings.TrimSpace(secret)
		// A secret holding the marker's brackets or words could be rebuilt by the marker itself;
		// no key is made of those.
		if secret == "" || strings.ContainsAny(secret, "[]") || strings.Contains(Marker, secret) {
			t.Skip()
		}
		r := New(secret)
		if r.Empty() {
			t.Skip() // a placeholder such as "EMPTY": not a secret
		}
		drop = min(max(drop, 0), len(secret))
		for _, in := range []string{before + after, before + secret + after, before + secret[drop:] + after, before + secret[:len(secret)-drop] + after} {
			outs := map[string]string{"String": r.String(in), "Stream": streamed(r, in, split)}
			for how, out := range outs {
				if len(secret) >= MinSubstring {
					if w := leak(out, secret); w != "" {
						t.Fatalf("%s(%q) = %q holds %q of the secret %q", how, in, out, w, secret)
					}
				} else if wholeToken(out, secret) {
					t.Fatalf("%s(%q) = %q holds the secret %q as a token", how, in, out, secret)
				}
			}
		}
	})
}

// streamed feeds in to a Stream in pieces of a size derived from split.
func streamed(r *Redactor, in string, split int) string {
	n := split % 17
	if n < 0 {
		n = -n
	}
	n++
	s := r.Stream()
	var b strings.Builder
	for len(in) > 0 {
		k := min(n, len(in))
		b.WriteString(s.Write(in[:k]))
		in = in[k:]
	}
	b.WriteString(s.Flush())
	return b.String()
}

// FuzzURL: URL never panics and never shows the password of a URL that parses.
func FuzzURL(f *testing.F) {
	f.Add("https://user:hunter2@h.example/v1?api-key=s3cr3t")
	f.Add("http://[::1]:8080/?x=1#key=2")
	f.Fuzz(func(t *testing.T, raw string) {
		out := URL(raw)
		for _, s := range URLSecrets(raw) {
			if len(s) >= 4 && strings.Contains(out, s) && !strings.Contains(Marker, s) && !strings.Contains(stripSecrets(raw), s) {
				t.Fatalf("URL(%q) = %q shows %q", raw, out, s)
			}
		}
	})
}

// stripSecrets is raw without its userinfo and query, the parts URL may keep: a secret that
// also appears in the host or path is shown there, and that is not a leak of the URL's
// credentials.
func stripSecrets(raw string) string {
	rest, _, _ := strings.Cut(raw, "?")
	rest, _, _ = strings.Cut(rest, "#")
	if i := strings.Index(rest, "://"); i >= 0 {
		if j := strings.LastIndex(rest[i:], "@"); j >= 0 {
			rest = rest[:i+3] + rest[i+j+1:]
		}
	}
	return rest
}

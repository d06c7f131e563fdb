package redact

import (
	"strings"
	"testing"
)

// key is 39 characters, the shape of an OpenAI key.
const key = "sk-abcdefghijklmnopqrstuvwxyz0123456789"

func TestString(t *testing.T) {
	for _, tc := range []struct {
		name, secret, in, want string
	}{
		{"whole key", key, "bad key " + key + " given", "bad key [redacted] given"},
		{"whole key inside a word is still the key", key, "x" + key + "y", "[redacted]"},
		// The attack: servers that echo the key without its prefix.
		{"last 36 of 39 characters", key, "Incorrect API key provided: " + key[3:] + ".", "Incorrect API key provided: [redacted]."},
		{"first 20 characters", key, "key " + key[:20] + "... was rejected", "key [redacted] was rejected"},
		{"middle run", key, "got '" + key[10:25] + "'", "got '[redacted]'"},
		{"a run glued to other text takes the token with it", key, "id=zz" + key[5:30] + "zz;", "id=[redacted];"},
		{"masked with asterisks", key, "Incorrect API key provided: sk-abc***6789.", "Incorrect API key provided: [redacted]."},
		{"masked with dots", key, "key sk-abcd...6789 rejected", "key [redacted] rejected"},
		{"masked, prefix dropped", key, "key abc…789 rejected", "key [redacted] rejected"},
		{"only the end shown", key, "key ending in ****6789", "key ending in [redacted]"},
		{"only the start shown", key, "key sk-abcd*** rejected", "key [redacted] rejected"},
		{"masked form of another key stays", key, "key sk-zzz***1111 rejected", "key sk-zzz***1111 rejected"},
		{"an ellipsis in prose stays", key, "Loading... done. Wait...", "Loading... done. Wait..."},
		{"the bare prefix stays", key, "OpenAI keys start with sk-... or sk-proj-", "OpenAI keys start with sk-... or sk-proj-"},
		{"a short run stays", key, "the alphabet starts abcdefgh", "the alphabet starts abcdefgh"},
		// A short key is redacted only as a whole token, never inside a word.
		{"short key in a word", "key", "looking for the keys in keyring", "looking for the keys in keyring"},
		{"short key as a word", "key", "the value is key.", "the value is [redacted]."},
		{"short key glued by - or _", "abc123", "abc123-x x_abc123 abc123def", "abc123-x x_abc123 abc123def"},
		{"short key quoted", "abc123", `{"api_key":"abc123"} Bearer abc123`, `{"api_key":"[redacted]"} Bearer [redacted]`},
		{"short key at both ends", "abc123", "abc123 and abc123", "[redacted] and [redacted]"},
		{"nothing to do", key, "Rate limit reached", "Rate limit reached"},
		{"empty text", key, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := New(tc.secret).String(tc.in); got != tc.want {
				t.Errorf("String(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestString_SeveralSecrets(t *testing.T) {
	r := New("", "  ", key, "AIzaSyD-0123456789abcdefghij", "tok_42", key)
	in := "a " + key + " b AIzaSyD-0123456789abcdefghij c tok_42 d " + key[4:]
	if got, want := r.String(in), "a [redacted] b [redacted] c [redacted] d [redacted]"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if r2 := r.With("another-secret-value"); r2.String("x another-secret-value") != "x [redacted]" || r.String("another-secret-value") != "another-secret-value" {
		t.Error("With must add secrets to a new Redactor and leave the old one alone")
	}
}

func TestEmpty(t *testing.T) {
	var nilR *Redactor
	for _, r := range []*Redactor{nil, New(), New("", " "), New("EMPTY", "ollama", "none")} {
		if !r.Empty() || r.String("sk-x "+key) != "sk-x "+key {
			t.Errorf("%v: an empty Redactor must change nothing", r)
		}
	}
	if got := nilR.Message("Incorrect API key provided: sk-a***b."); got != "Incorrect API key provided: [redacted]." {
		t.Errorf("Message without a secret: %q", got)
	}
}

func TestMessage(t *testing.T) {
	r := New(key)
	for in, want := range map[string]string{
		"Incorrect API key provided: sk-proj-****abcd.": "Incorrect API key provided: [redacted].",
		"quoted sk-ant-api03-xyz back":                  "quoted [redacted] back",
		"key AIzaSyA0123456789abcdefghijk invalid":      "key [redacted] invalid",
		"provided: " + key[3:]:                          "provided: [redacted]",
		"Rate limit reached for sk- keys.":              "Rate limit reached for sk- keys.",
	} {
		if got := r.Message(in); got != want {
			t.Errorf("Message(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStream(t *testing.T) {
	r := New(key, "abc123")
	for _, tc := range []struct {
		name   string
		pieces []string
		want   string
	}{
		{"key split in three", []string{"the key is " + key[:12], key[12:30], key[30:] + " ok"}, "the key is [redacted] ok"},
		{"prefix-stripped key split", []string{"x " + key[3:9], key[9:], "."}, "x [redacted]."},
		{"masked form split", []string{"sk-ab", "c***", "6789 done"}, "[redacted] done"},
		{"short key split", []string{"is abc", "123."}, "is [redacted]."},
		{"short key split inside a word", []string{"xabc", "123y"}, "xabc123y"},
		{"plain text", []string{"hello ", "world", "\n"}, "hello world\n"},
		{"byte by byte", strings.Split("say "+key+" now", ""), "say [redacted] now"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := r.Stream()
			var b strings.Builder
			for _, p := range tc.pieces {
				b.WriteString(s.Write(p))
			}
			b.WriteString(s.Flush())
			if got := b.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestStream_HoldsBackLittle: text streams through once it cannot be part of a secret, so the
// live view lags by at most a key's length.
func TestStream_HoldsBackLittle(t *testing.T) {
	s := New(key).Stream()
	long := strings.Repeat("word ", 20)
	if got := s.Write(long); len(got) < len(long)-len(key)-len("word ") || !strings.HasPrefix(long, got) {
		t.Errorf("Write held back too much: %q", got)
	}
	if New().Stream().Write("x") != "x" {
		t.Error("a Stream without secrets must not hold anything back")
	}
	// A run without any separator is let through eventually, still redacted.
	s = New(key).Stream()
	var b strings.Builder
	for range 5000 {
		b.WriteString(s.Write("abcdefgh"))
	}
	if b.Len() == 0 {
		t.Error("a long run without separators is held back forever")
	}
}

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.openai.com/v1":                          "https://api.openai.com/v1",
		"https://user:hunter2@proxy.example/v1":              "https://[redacted]@proxy.example/v1",
		"https://ghp_TOKEN@proxy.example/v1":                 "https://[redacted]@proxy.example/v1",
		"https://x.example/v1?api-key=s3cr3t&deployment=gpt": "https://x.example/v1?api-key=[redacted]&deployment=gpt",
		"https://x.example/v1?key=abc&access_token=def":      "https://x.example/v1?key=[redacted]&access_token=[redacted]",
		"https://x.example/v1#token=abc":                     "https://x.example/v1#token=[redacted]",
		"http://u:p@ss@bad host/?key=zz":                     "http://[redacted]@bad host/?key=[redacted]",
		"":                                                   "",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestURLSecrets(t *testing.T) {
	got := URLSecrets("https://user:p%40ss@h.example/v1?api-key=s3cr3t&model=x")
	r := New(got...)
	in := `Post "https://user:p%40ss@h.example/v1?api-key=s3cr3t": p@ss s3cr3t model x`
	if out := r.String(in); strings.Contains(out, "s3cr3t") || strings.Contains(out, "p@ss") || strings.Contains(out, "p%40ss") || !strings.Contains(out, "model x") {
		t.Errorf("secrets %q redact %q to %q", got, in, out)
	}
}

type inner struct {
	Text string
	n    int
}

type payload struct {
	Agent string
	Msgs  []inner
	Ptr   *inner
	Any   any
	Map   map[string]string
	Arr   [2]string
}

func TestValue(t *testing.T) {
	r := New(key)
	orig := payload{Agent: "a1", Msgs: []inner{{Text: "ok"}, {Text: "k=" + key, n: 7}}, Ptr: &inner{Text: key},
		Any: inner{Text: key[2:]}, Map: map[string]string{"x": key, "y": "fine"}, Arr: [2]string{"", key}}
	got := Value(r, orig)
	want := payload{Agent: "a1", Msgs: []inner{{Text: "ok"}, {Text: "k=[redacted]", n: 7}}, Ptr: &inner{Text: "[redacted]"},
		Any: inner{Text: "[redacted]"}, Map: map[string]string{"x": "[redacted]", "y": "fine"}, Arr: [2]string{"", "[redacted]"}}
	if got.Agent != want.Agent || got.Msgs[1] != want.Msgs[1] || *got.Ptr != *want.Ptr || got.Any != want.Any ||
		got.Map["x"] != want.Map["x"] || got.Map["y"] != "fine" || got.Arr != want.Arr {
		t.Errorf("got %+v", got)
	}
	if orig.Msgs[1].Text != "k="+key || orig.Ptr.Text != key || orig.Map["x"] != key {
		t.Error("Value changed its argument")
	}
	clean := payload{Agent: "a1", Msgs: []inner{{Text: "ok"}}}
	if got := Value(r, clean); &got.Msgs[0] != &clean.Msgs[0] {
		t.Error("a value without secrets must come back as is, not copied")
	}
}

package lineedit

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func decode(chunks ...string) []Key {
	var d Decoder
	var keys []Key
	for _, c := range chunks {
		d.Feed([]byte(c), func(k Key) { keys = append(keys, k) })
	}
	return keys
}

func runes(s string) []Key {
	var keys []Key
	for _, r := range s {
		keys = append(keys, Key{Kind: KeyRune, Rune: r})
	}
	return keys
}

func TestDecoder(t *testing.T) {
	k := func(kind Kind) Key { return Key{Kind: kind} }
	tests := []struct {
		name   string
		chunks []string
		want   []Key
	}{
		{"text", []string{"hé"}, runes("hé")},
		{"arrows", []string{"\x1b[A\x1b[B\x1b[C\x1b[D"}, []Key{k(KeyUp), k(KeyDown), k(KeyRight), k(KeyLeft)}},
		{"ss3 arrows and home/end", []string{"\x1bOA\x1bOH\x1bOF"}, []Key{k(KeyUp), k(KeyHome), k(KeyEnd)}},
		{"home/end/delete tilde forms", []string{"\x1b[1~\x1b[4~\x1b[7~\x1b[8~\x1b[3~\x1b[H\x1b[F"},
			[]Key{k(KeyHome), k(KeyEnd), k(KeyHome), k(KeyEnd), k(KeyDelete), k(KeyHome), k(KeyEnd)}},
		{"ctrl-arrows move by word", []string{"\x1b[1;5D\x1b[1;5C\x1bb\x1bf"}, []Key{k(KeyWordLeft), k(KeyWordRight), k(KeyWordLeft), k(KeyWordRight)}},
		{"controls", []string{"\x01\x05\x0b\x15\x17\x03\x04\x02\x06\x10\x0e\x0c"},
			[]Key{k(KeyHome), k(KeyEnd), k(KeyKillEnd), k(KeyKillStart), k(KeyKillWord), k(KeyInterrupt), k(KeyEOF),
				k(KeyLeft), k(KeyRight), k(KeyUp), k(KeyDown), k(KeyClear)}},
		{"backspace both ways", []string{"\x7f\x08\x1b\x7f"}, []Key{k(KeyBackspace), k(KeyBackspace), k(KeyKillWord)}},
		{"enter both ways", []string{"\r\n"}, []Key{k(KeyEnter), k(KeyEnter)}},
		{"tab is a space", []string{"a\tb"}, runes("a b")},
		{"sequence split across reads", []string{"\x1b", "[", "A"}, []Key{k(KeyUp)}},
		{"rune split across reads", []string{"\xc3", "\xa9"}, runes("é")},
		{"unknown sequences are dropped", []string{"\x1b[15~x\x1b[?25hy\x1b]0;title\x07z"}, runes("xy0;titlez")},
		{"bidi overrides and C1 never enter", []string{"a\u202eb\u0085c"}, runes("abc")},
		{"alt+letter dropped", []string{"\x1bxq"}, runes("q")},
		{"bracketed paste keeps newlines as spaces", []string{"\x1b[200~one\r\ntwo\nthree\x03\x1b[201~\r"},
			append(append([]Key{k(KeyPasteStart)}, runes("one two three")...), k(KeyPasteEnd), k(KeyEnter))},
		{"paste split mid-rune", []string{"\x1b[200~\xc3", "\xa9\x1b[201~"}, []Key{k(KeyPasteStart), {Kind: KeyRune, Rune: 'é'}, k(KeyPasteEnd)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, decode(tc.chunks...)); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecoder_PendingAndFlush(t *testing.T) {
	var d Decoder
	var keys []Key
	d.Feed([]byte("\x1b"), func(k Key) { keys = append(keys, k) })
	if !d.Pending() || len(keys) != 0 {
		t.Fatalf("lone Esc: pending %v, keys %v", d.Pending(), keys)
	}
	d.Flush()
	d.Feed([]byte("[A"), func(k Key) { keys = append(keys, k) })
	if diff := cmp.Diff(runes("[A"), keys); diff != "" {
		t.Errorf("after a flushed Esc (-want +got):\n%s", diff)
	}
	// An endless sequence is dropped rather than held forever.
	d.Feed([]byte("\x1b["), func(Key) {})
	for range 100 {
		d.Feed([]byte("1"), func(Key) {})
	}
	if d.Pending() {
		t.Error("an overlong sequence is still pending")
	}
}

func FuzzDecoder(f *testing.F) {
	f.Add([]byte("\x1b[200~a\r\nb\x1b[201~\x1b[1;5D\xc3"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var d Decoder
		e := NewEditor([]string{"one", "two"})
		d.Feed(b, func(k Key) {
			e.Handle(k)
			_ = e.Render("User: ", 20)
		})
		for _, r := range e.Line() {
			if !printable(r) {
				t.Fatalf("control rune %q in the line", r)
			}
		}
	})
}

package mdterm

import (
	"strings"
	"testing"
)

// hostile are answers at the default max_response_chars (200,000) made of what the inline
// parser looks ahead for: unclosed brackets, link starts, backticks and emphasis. Each used
// to scan to the end of the text from every one of its openers.
var hostile = map[string]string{
	"brackets":    strings.Repeat("[", 200_000),
	"link starts": strings.Repeat("[a](", 50_000),
	"backticks":   strings.Repeat("`a", 100_000),
	"emphasis":    strings.Repeat("*a", 100_000),
	"titles":      strings.Repeat(`[a](x "`, 28_000),
}

// A hostile answer renders, its text kept. (Before the look-ahead was bounded, "brackets"
// alone took about 12 s here, 50,000 of them 0.7 s: the test's own timeout is what a regression hits.)
func TestRender_HostileAnswersStayLinear(t *testing.T) {
	for name, in := range hostile {
		out := Render(in, 80)
		if got, want := strings.Count(out, "a"), strings.Count(in, "a"); got < want {
			t.Errorf("%s: %d of %d letters kept", name, got, want)
		}
	}
}

func BenchmarkRender_Hostile(b *testing.B) {
	for name, in := range hostile {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				Render(in, 80)
			}
		})
	}
}

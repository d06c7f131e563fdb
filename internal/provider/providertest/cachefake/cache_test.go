package cachefake

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// blk is a block of tokens tokens (4 bytes each) named name: blocks of one name are the same.
func blk(name string, tokens int, bp bool) Block {
	return Block{Text: name + strings.Repeat("x", tokens*4-len(name)), Breakpoint: bp}
}

// run is one request of a case: its blocks, whether its response is streamed (committed)
// before the next request, and what the API must report.
type run struct {
	model  string
	blocks []Block
	commit bool
	want   AnthropicUsage
}

func TestAnthropic_CachesAtBreakpointsOnceWritten(t *testing.T) {
	a, b, c := blk("a", 1200, true), blk("b", 800, true), blk("c", 100, true)
	small := make([]Block, 19)
	for k := range small {
		small[k] = blk(fmt.Sprintf("s%d", k), 10, false)
	}
	lookback := func(extra int, bp bool) []Block { // a with no breakpoint of its own, then extra small blocks
		out := append([]Block{blk("a", 1200, false)}, small[:extra-1]...)
		return append(out, blk("end", 10, bp))
	}
	for _, tc := range []struct {
		name string
		runs []run
	}{
		{"a prefix under the minimum is not cached", []run{
			{"m", []Block{blk("a", 1000, true)}, true, AnthropicUsage{Input: 1000}},
			{"m", []Block{blk("a", 1000, true)}, true, AnthropicUsage{Input: 1000}},
		}},
		{"written, then read", []run{
			{"m", []Block{a}, true, AnthropicUsage{CacheCreation: 1200}},
			{"m", []Block{a}, true, AnthropicUsage{CacheRead: 1200}},
		}},
		{"not readable before its response is streamed", []run{
			{"m", []Block{a}, false, AnthropicUsage{CacheCreation: 1200}},
			{"m", []Block{a}, true, AnthropicUsage{CacheCreation: 1200}},
		}},
		{"another model's entry is not read", []run{
			{"m", []Block{a}, true, AnthropicUsage{CacheCreation: 1200}},
			{"n", []Block{a}, true, AnthropicUsage{CacheCreation: 1200}},
		}},
		{"read up to one breakpoint, write to the next, input after the last", []run{
			{"m", []Block{a}, true, AnthropicUsage{CacheCreation: 1200}},
			{"m", []Block{a, b, blk("tail", 50, false)}, true, AnthropicUsage{CacheRead: 1200, CacheCreation: 800, Input: 50}},
			{"m", []Block{a, b, blk("other", 70, false)}, true, AnthropicUsage{CacheRead: 2000, Input: 70}},
		}},
		{"entries only at breakpoints", []run{
			{"m", []Block{blk("a", 1200, false), c}, true, AnthropicUsage{CacheCreation: 1300}},
			{"m", []Block{blk("a", 1200, false), blk("d", 100, true)}, true, AnthropicUsage{CacheCreation: 1300}},
		}},
		{"found 19 blocks before a breakpoint", []run{
			{"m", []Block{a}, true, AnthropicUsage{CacheCreation: 1200}},
			{"m", lookback(19, true), true, AnthropicUsage{CacheRead: 1200, CacheCreation: 190}},
		}},
		{"not found 20 blocks before it", []run{
			{"m", []Block{a}, true, AnthropicUsage{CacheCreation: 1200}},
			{"m", append(lookback(19, false), blk("end2", 10, true)), true, AnthropicUsage{CacheCreation: 1400}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cache Anthropic
			for k, r := range tc.runs {
				got, commit, err := cache.Lookup(r.model, r.blocks)
				if err != nil {
					t.Fatalf("request %d: %v", k+1, err)
				}
				if got != r.want {
					t.Errorf("request %d: %+v, want %+v", k+1, got, r.want)
				}
				if r.commit {
					commit()
				}
			}
		})
	}
}

func TestAnthropic_RefusesAFifthBreakpoint(t *testing.T) {
	var cache Anthropic
	blocks := []Block{blk("a", 10, true), blk("b", 10, true), blk("c", 10, true), blk("d", 10, true)}
	if _, _, err := cache.Lookup("m", blocks); err != nil {
		t.Fatalf("four breakpoints: %v", err)
	}
	if _, _, err := cache.Lookup("m", append(blocks, blk("e", 10, true))); err == nil || !strings.Contains(err.Error(), "found 5") {
		t.Fatalf("five breakpoints: %v", err)
	}
}

// A request body lays out in cache order, cache_control marking breakpoints and left out of
// the text, so that moving a breakpoint does not change the prefix.
func TestAnthropicBlocks_CacheOrder(t *testing.T) {
	var body map[string]any
	_ = json.Unmarshal([]byte(`{
		"model": "m", "cache_control": {"type": "ephemeral"},
		"system": [{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}],
		"tools": [{"name": "vote"}, {"name": "new_answer", "cache_control": {"type": "ephemeral"}}],
		"messages": [{"role": "user", "content": "task"},
			{"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "tool_use", "id": "t", "name": "vote", "input": {}}]}]}`), &body)
	var got []string
	for _, b := range AnthropicBlocks(body) {
		got = append(got, fmt.Sprintf("%s %v", b.Text, b.Breakpoint))
	}
	want := []string{
		`tool:{"name":"vote"} false`,
		`tool:{"name":"new_answer"} true`,
		`system:{"text":"sys","type":"text"} true`,
		`user:"task" false`,
		`assistant:{"text":"a","type":"text"} false`,
		`assistant:{"id":"t","input":{},"name":"vote","type":"tool_use"} true`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("blocks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestStep_1024ThenIncrementsOf128(t *testing.T) {
	for _, tc := range []struct{ shared, want int64 }{
		{0, 0}, {1023, 0}, {1024, 1024}, {1151, 1024}, {1152, 1152}, {5000, 4992},
	} {
		if got := Step(tc.shared); got != tc.want {
			t.Errorf("Step(%d) = %d, want %d", tc.shared, got, tc.want)
		}
	}
}

func TestOpenAI_CachesCompletedPromptsOfTheModel(t *testing.T) {
	tokens := func(name string, n int) string { return name + strings.Repeat("x", n*4-len(name)) }
	long := tokens("p", 2000)
	for _, tc := range []struct {
		name          string
		model, prompt string
		commitFirst   bool
		input, cached int64
	}{
		{"the same prompt", "m", long, true, 2000, 1920},
		{"a prompt sharing 1,500 tokens", "m", long[:6000] + tokens("q", 300), true, 1800, 1408},
		{"a prompt sharing under 1,024 tokens", "m", long[:4000] + tokens("q", 900), true, 1900, 0},
		{"before the first completed", "m", long, false, 2000, 0},
		{"another model", "n", long, true, 2000, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cache OpenAI
			in, cached, commit := cache.Lookup("m", long)
			if in != 2000 || cached != 0 {
				t.Fatalf("first request: %d input, %d cached", in, cached)
			}
			if tc.commitFirst {
				commit()
			}
			if in, cached, _ := cache.Lookup(tc.model, tc.prompt); in != tc.input || cached != tc.cached {
				t.Errorf("%d input, %d cached; want %d, %d", in, cached, tc.input, tc.cached)
			}
		})
	}
}

package permission

import (
	"errors"
	"slices"

	"massgen/internal/permission/rule"

	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"massgen/internal/event"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestDecide is MassGen's precedence: hardline, then deny, allow and ask across every scope
// (role and rules), then the risk tier.
func TestDecide(t *testing.T) {
	const ws = "/w/agent"
	for _, tc := range []struct {
		name       string
		c          Config
		tool, args string
		want, rule string
		risk       string
	}{
		{"low-risk read, no rules", Config{}, "read_file", `{"path":"a.txt"}`, Allow, "", RiskLow},
		{"medium command asks", Config{}, "execute_command", `{"command":"python x.py"}`, Ask, "", RiskMedium},
		{"read-only command is low", Config{}, "execute_command", `{"command":"git status"}`, Allow, "", RiskLow},
		{"egress is high", Config{}, "execute_command", `{"command":"curl https://x"}`, Ask, "", RiskHigh},
		{"a chain is asked about", Config{AutomationDefault: rule.DenyAll}, "execute_command", `{"command":"echo ok; python3 -c 'print(1)'"}`, Ask, "", RiskMedium},
		{"a launcher is asked about", Config{AutomationDefault: rule.DenyAll}, "execute_command", `{"command":"env python3 -c 'print(1)'"}`, Ask, "", RiskMedium},
		{"deny rule", Config{Deny: []string{"command(rm *)"}}, "execute_command", `{"command":"rm -f x"}`, Deny, "command(rm *)", RiskMedium},
		{"deny wins over allow", Config{Allow: []string{"command(*)"}, Deny: []string{"command(curl *)"}}, "execute_command", `{"command":"curl evil"}`, Deny, "command(curl *)", RiskHigh},
		{"allow silences the risk ask", Config{Allow: []string{"command(curl *)"}}, "execute_command", `{"command":"curl ok"}`, Allow, "command(curl *)", RiskHigh},
		{"allow wins over ask", Config{Allow: []string{"command(npm *)"}, Ask: []string{"command(npm publish*)"}}, "execute_command", `{"command":"npm publish"}`, Allow, "command(npm *)", RiskHigh},
		{"ask rule", Config{Ask: []string{"command(npm publish*)"}}, "execute_command", `{"command":"npm publish"}`, Ask, "command(npm publish*)", RiskHigh},
		{"relative path rule", Config{Deny: []string{"write_file(secrets/*)"}}, "write_file", `{"path":"secrets/k.txt"}`, Deny, "write_file(secrets/*)", RiskLow},
		{"./** names the workspace", Config{Deny: []string{"write_file(./**)"}}, "edit_file", `{"path":"/w/agent/x.go"}`, Deny, "write_file(./**)", RiskLow},
		{"absolute path rule", Config{Deny: []string{"read_file(/etc/**)"}}, "read_file", `{"path":"/etc/passwd"}`, Deny, "read_file(/etc/**)", RiskLow},
		{"dotdot cleaned", Config{Deny: []string{"read_file(/etc/**)"}}, "read_file", `{"path":"../../../etc/passwd"}`, Deny, "read_file(/etc/**)", RiskLow},
		{"move checks both ends", Config{Deny: []string{"write_file(/etc/*)"}}, "move_file", `{"source":"a","destination":"/etc/x"}`, Deny, "write_file(/etc/*)", RiskLow},
		{"copy reads the source", Config{Deny: []string{"read_file(*.pem)"}}, "copy_file", `{"source":"k.pem","destination":"b"}`, Deny, "read_file(*.pem)", RiskLow},
		{"allow must cover every target", Config{Allow: []string{"write_file(/w/agent/*)"}, Ask: []string{"write_file(/x/*)"}}, "move_file", `{"source":"a","destination":"/x/b"}`, Ask, "write_file(/x/*)", RiskLow},
		{"delete is medium", Config{}, "delete_file", `{"path":"a"}`, Ask, "", RiskMedium},
		{"any action", Config{Deny: []string{"*(*secret*)"}}, "execute_command", `{"command":"cat secret"}`, Deny, "*(*secret*)", RiskLow},
		{"mcp server/tool", Config{Deny: []string{"mcp(linear/*)"}}, "mcp__linear__create_issue", `{}`, Deny, "mcp(linear/*)", RiskLow},
		{"mcp fetch is read_url", Config{Ask: []string{"read_url(*)"}}, "mcp__fetch__fetch", `{"url":"https://x"}`, Ask, "read_url(*)", RiskHigh},
		{"filesystem server is file access", Config{Deny: []string{"write_file(/tmp/*)"}}, "mcp__filesystem__write_file", `{"path":"/tmp/x"}`, Deny, "write_file(/tmp/*)", RiskLow},
		{"custom tool by name", Config{Deny: []string{"mcp(get_weather)"}}, "get_weather", `{"city":"x"}`, Deny, "mcp(get_weather)", RiskMedium},
		{"background shell", Config{Deny: []string{"command(npm run dev)"}}, "start_background_shell", `{"command":"npm run dev"}`, Deny, "command(npm run dev)", RiskMedium},
		{"read-only role denies shell", Config{Role: "read-only", Allow: []string{"command(ls)"}}, "execute_command", `{"command":"ls"}`, Deny, "command(*)", RiskLow},
		{"read-only role denies writes over allow", Config{Role: "researcher", Allow: []string{"write_file(./out.txt)"}}, "write_file", `{"path":"out.txt"}`, Deny, "write_file(*)", RiskLow},
		{"read-only role allows reads", Config{Role: "read-only"}, "list_directory", `{}`, Allow, "read_file(*)", RiskLow},
		{"read-only role refuses an unmarked mcp tool", Config{Role: "read-only", Allow: []string{"mcp(*)"}}, "mcp__linear__get_issue", `{}`, Deny, RoleRule, RiskMedium},
		{"read-only role runs a marked mcp tool", Config{Role: "read-only", ReadOnlyTools: []string{"mcp__linear__get_*"}}, "mcp__linear__get_issue", `{}`, Ask, "", RiskMedium},
		{"read-only role runs a marked server", Config{Role: "researcher", ReadOnlyTools: []string{"mcp__linear__*"}}, "mcp__linear__create_issue", `{}`, Allow, "", RiskLow},
		{"read-only role reads through a filesystem server", Config{Role: "read-only"}, "mcp__filesystem__read_file", `{"path":"a"}`, Allow, "read_file(*)", RiskLow},
		{"read-write role runs mcp tools", Config{Role: "read-write"}, "mcp__linear__create_issue", `{}`, Allow, "", RiskLow},
		{"hardline beats allow", Config{Allow: []string{"*"}}, "execute_command", `{"command":"rm -rf /"}`, Deny, "hardline", RiskHigh},
		{"hardline fork bomb", Config{Allow: []string{"*"}}, "execute_command", `{"command":":(){ :|:& };:"}`, Deny, "hardline", RiskMedium},
		{"hardline in a custom tool's code", Config{Allow: []string{"*"}}, "run_python", `{"code":"mkfs.ext4 /dev/sda"}`, Deny, "hardline", RiskHigh},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPolicy(tc.c, ws)
			if err != nil {
				t.Fatal(err)
			}
			v, checked := p.Decide(tc.tool, tc.args)
			if !checked || v.Decision != tc.want || v.Rule != tc.rule {
				t.Errorf("Decide = %+v, %v; want %s by %q", v, checked, tc.want, tc.rule)
			}
			if tc.rule != "hardline" && v.Risk != tc.risk {
				t.Errorf("risk = %s, want %s", v.Risk, tc.risk)
			}
		})
	}
	p, _ := NewPolicy(Config{Deny: []string{"*"}}, ws)
	if _, checked := p.Decide("kill_background_shell", `{"shell_id":"x"}`); checked {
		t.Error("a shell control was checked")
	}
}

func TestAutomatic(t *testing.T) {
	high := Verdict{Decision: Ask, Risk: RiskHigh}
	med := Verdict{Decision: Ask, Risk: RiskMedium}
	for _, tc := range []struct {
		def       string
		high, med string
	}{{"", Deny, Allow}, {rule.RiskBased, Deny, Allow}, {rule.DenyAll, Deny, Deny}, {rule.AllowAll, Allow, Allow}} {
		p, err := NewPolicy(Config{AutomationDefault: tc.def}, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Automatic(high); got != tc.high {
			t.Errorf("%q high: %s", tc.def, got)
		}
		if got := p.Automatic(med); got != tc.med {
			t.Errorf("%q medium: %s", tc.def, got)
		}
	}
	if _, err := NewPolicy(Config{AutomationDefault: "sometimes"}, ""); err == nil {
		t.Error("a bad automation_default was accepted")
	}
}

type events struct{ got chan event.Payload }

func (e events) publish(p event.Payload) { e.got <- p }

// TestGate_Ask: an ask waits for the person's answer; nobody answering in time, or nobody
// able to, leaves it to automation_default; the run ending ends the wait.
func TestGate_Ask(t *testing.T) {
	ask := Config{Ask: []string{"command(deploy*)"}, AutomationDefault: rule.DenyAll}
	newGate := func(b *Broker, timeout time.Duration) (*Gate, events) {
		ev := events{got: make(chan event.Payload, 16)}
		g := NewGate(GateOptions{Broker: b, Timeout: timeout, Publish: ev.publish})
		p, _ := NewPolicy(ask, "")
		g.Add("a", p)
		return g, ev
	}
	const call = `{"command":"deploy prod"}`
	for _, answer := range []string{Allow, Deny} {
		b := NewBroker()
		g, ev := newGate(b, time.Minute)
		done := make(chan string)
		go func() { done <- g.Check(t.Context(), "a", "execute_command", call) }()
		asked := (<-ev.got).(event.PermissionAsked)
		if asked.Agent != "a" || asked.Action != "command" || asked.Target != "deploy prod" || asked.Rule != "command(deploy*)" {
			t.Errorf("asked = %+v", asked)
		}
		if err := b.Answer(asked.ID, answer); err != nil {
			t.Fatal(err)
		}
		refusal := <-done
		decided := (<-ev.got).(event.PermissionDecided)
		if decided.ID != asked.ID || decided.Decision != answer || decided.By != event.ByPerson {
			t.Errorf("decided = %+v", decided)
		}
		if (refusal == "") != (answer == Allow) || answer == Deny && !strings.Contains(refusal, "said no") {
			t.Errorf("answer %s: refusal %q", answer, refusal)
		}
		if err := b.Answer(asked.ID, Allow); err == nil {
			t.Error("a second answer was taken")
		}
	}
	if err := NewBroker().Answer("ask_1", "maybe"); err == nil {
		t.Error("a bad decision was taken")
	}

	g, ev := newGate(NewBroker(), 20*time.Millisecond)
	if r := g.Check(t.Context(), "a", "execute_command", call); !strings.Contains(r, "nobody answered the approval request within 20ms") {
		t.Errorf("timeout: %q", r)
	}
	<-ev.got
	if d := (<-ev.got).(event.PermissionDecided); d.By != event.ByTimeout || d.Decision != Deny {
		t.Errorf("timeout decided = %+v", d)
	}

	g, ev = newGate(nil, time.Minute)
	if r := g.Check(t.Context(), "a", "execute_command", call); !strings.Contains(r, "automation_default: deny-all") {
		t.Errorf("nobody to ask: %q", r)
	}
	if d := (<-ev.got).(event.PermissionDecided); d.By != event.ByAutomationDefault {
		t.Errorf("decided = %+v", d)
	}

	b := NewBroker()
	g, ev = newGate(b, time.Hour)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan string)
	go func() { done <- g.Check(ctx, "a", "execute_command", call) }()
	<-ev.got
	cancel()
	if r := <-done; !strings.Contains(r, "session ended") {
		t.Errorf("cancelled: %q", r)
	}
	if b.Waiting() != 0 {
		t.Error("the ask is still registered")
	}
	if r := g.Check(t.Context(), "other", "execute_command", call); r != "" {
		t.Errorf("an agent without permissions was refused: %q", r)
	}
}

// max_consecutive_auto caps the automatic approvals in a row; a person's answer resets it.
func TestGate_Budget(t *testing.T) {
	g := NewGate(GateOptions{})
	p, _ := NewPolicy(Config{MaxConsecutiveAuto: 2}, "")
	g.Add("a", p)
	call := `{"command":"python x.py"}` // medium: asked, allowed by risk-based
	for i, want := range []bool{true, true, false} {
		if r := g.Check(t.Context(), "a", "execute_command", call); (r == "") != want {
			t.Errorf("call %d: refusal %q", i+1, r)
		}
	}
}

// Config offers rule.RoleNames; each must be a preset here, and each preset offered.
func TestRoles_AreTheRoleNames(t *testing.T) {
	var got []string
	for name := range Roles {
		got = append(got, name)
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(rule.RoleNames))
	if !slices.Equal(got, want) {
		t.Errorf("Roles has %v; rule.RoleNames is %v", got, want)
	}
}

// An ask made elsewhere waits in the broker: the answer goes to forward, once; a withdrawn
// ask takes no answer; an ask already waiting is not taken over.
func TestBroker_ForwardsAnAskMadeElsewhere(t *testing.T) {
	b := NewBroker()
	var got []string
	withdraw := b.Forward("w1/ask_1", func(a string) { got = append(got, a) })
	if b.Waiting() != 1 {
		t.Fatalf("waiting %d, want 1", b.Waiting())
	}
	if err := b.Answer("w1/ask_1", Allow); err != nil {
		t.Fatal(err)
	}
	if err := b.Answer("w1/ask_1", Deny); !errors.Is(err, ErrNoAsk) {
		t.Errorf("a second answer: %v, want ErrNoAsk", err)
	}
	withdraw() // decided already: nothing to forget
	if len(got) != 1 || got[0] != Allow {
		t.Errorf("forwarded %v, want [allow]", got)
	}
	withdraw = b.Forward("w1/ask_2", func(a string) { got = append(got, a) })
	withdraw()
	if err := b.Answer("w1/ask_2", Allow); !errors.Is(err, ErrNoAsk) || len(got) != 1 {
		t.Errorf("an answer to a withdrawn ask: %v, forwarded %v", err, got)
	}
	ch := b.open("ask_3")
	_ = b.Forward("ask_3", func(a string) { t.Errorf("a waiting ask was taken over: %s", a) })
	if err := b.Answer("ask_3", Deny); err != nil || <-ch != Deny {
		t.Errorf("the waiting ask lost its answer: %v", err)
	}
}

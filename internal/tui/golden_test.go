package tui

import (
	"fmt"
	"testing"

	"massgen/internal/event"
)

// TestView_Golden renders the main screens at two sizes and compares them, without styles,
// with testdata/<name>_<w>x<h>.golden.
func TestView_Golden(t *testing.T) {
	cases := []struct {
		name   string
		events func() []event.Event
		keys   []string
	}{
		{"columns", func() []event.Event { return midSession().events }, nil},
		{"tabs", func() []event.Event { return eightAgents().events }, nil},
		{"agent", func() []event.Event { return midSession().events }, []string{"3"}},
		{"table", func() []event.Event { return midSession().events }, []string{"t"}},
		{"help", func() []event.Event { return midSession().events }, []string{"?"}},
		{"final", func() []event.Event { return session().events }, nil},
		{"final_weighed", func() []event.Event { return weighedSession().events }, nil},
		{"coordination", func() []event.Event { return coordinated().events }, nil},
		{"start", func() []event.Event { return starting().events }, nil},
		{"tools", func() []event.Event { return withTools().events }, nil},
		{"tools_agent", func() []event.Event { return withTools().events }, []string{"1"}},
		{"answer_now", func() []event.Event { return answeredNow().events }, nil},
	}
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		for _, c := range cases {
			name := fmt.Sprintf("%s_%dx%d", c.name, size[0], size[1])
			t.Run(name, func(t *testing.T) {
				m := newModel(size[0], size[1], c.events())
				press(m, c.keys...)
				golden(t, name+".golden", screenText(m))
			})
		}
	}
}

package engine

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"massgen/internal/coord"
	"massgen/internal/event"
	"massgen/internal/prompt"
	"massgen/internal/provider"
)

// generatePersonas makes persona_generator's one call before coordination, through the first
// agent's model, and gives every agent the persona written for it (under its anonymous label:
// real ids never reach a prompt). An agent the reply has no persona for, or every agent when
// the call fails, gets a built-in one instead, as in MassGen: the session goes on, and the
// event's warning says what happened.
//
// MassGen runs this as a sub-orchestration of all the agents writing personas.json; one call
// costs a fraction of that and gives the same kind of result. It returns the event it
// published, nil when ctx was cancelled first.
func (s *session) generatePersonas(ctx context.Context) *event.PersonasGenerated {
	if ev := s.keepPersonas(); ev != nil {
		return ev
	}
	mode := cmp.Or(s.o.Orchestrator.PersonaGenerator.DiversityMode, prompt.DiversityPerspective)
	labels := make([]string, len(s.agents))
	systems := make([]string, len(s.agents))
	for i, a := range s.agents {
		labels[i], systems[i] = coord.Label(i), a.System
	}
	reply, err := s.ask(ctx, 0, provider.StagePersona, "", prompt.PersonaRequest(mode, s.o.Question, labels, systems))
	if ctx.Err() != nil {
		return nil
	}
	ev := s.personasWritten(reply, err)
	s.personas = s.personasFrom(ev)
	s.publish(ev)
	return &ev
}

// personasWritten is the personas the persona call's reply (or its failure, err) gives the
// agents: an agent the reply has none for gets a built-in one.
func (s *session) personasWritten(reply string, err error) event.PersonasGenerated {
	mode := cmp.Or(s.o.Orchestrator.PersonaGenerator.DiversityMode, prompt.DiversityPerspective)
	labels := make([]string, len(s.agents))
	for i := range s.agents {
		labels[i] = coord.Label(i)
	}
	found := map[string]string{}
	if err == nil {
		found = prompt.ParsePersonas(reply, labels)
	}
	ev := event.PersonasGenerated{Agent: s.agents[0].ID, Mode: mode}
	var missing []string
	for i, a := range s.agents {
		text, ok := found[labels[i]]
		if !ok {
			text = prompt.FallbackPersona(mode, i)
			missing = append(missing, labels[i])
		}
		ev.Personas = append(ev.Personas, event.Persona{Agent: a.ID, Label: labels[i], Text: text, Fallback: !ok})
	}
	switch {
	case err != nil:
		ev.Warning = fmt.Sprintf("the persona call failed (%v): every agent got a built-in persona", err)
	case len(missing) == len(labels):
		reply, _ := cut(strings.Join(strings.Fields(reply), " "), 200)
		ev.Warning = fmt.Sprintf("the persona reply could not be read (%q): every agent got a built-in persona", reply)
	case len(missing) > 0:
		ev.Warning = "the persona reply had none for " + strings.Join(missing, ", ") + ": they got a built-in persona"
	}
	return ev
}

// keepPersonas gives the agents the personas of an earlier turn (Options.Personas, with
// persona_generator.persist_across_turns) instead of writing new ones, and returns the event
// it published when it did: only when those cover every agent of this turn by id, so that a
// team that changed between turns gets personas written for it.
func (s *session) keepPersonas() *event.PersonasGenerated {
	if len(s.o.Personas) == 0 {
		return nil
	}
	byID := make(map[string]event.Persona, len(s.o.Personas))
	for _, p := range s.o.Personas {
		byID[p.Agent] = p
	}
	ev := event.PersonasGenerated{Agent: s.agents[0].ID, Mode: cmp.Or(s.o.Orchestrator.PersonaGenerator.DiversityMode, prompt.DiversityPerspective),
		FromTurn: s.o.PersonasTurn}
	for i, a := range s.agents {
		p, ok := byID[a.ID]
		if !ok || strings.TrimSpace(p.Text) == "" {
			return nil
		}
		ev.Personas = append(ev.Personas, event.Persona{Agent: a.ID, Label: coord.Label(i), Text: p.Text, Fallback: p.Fallback})
	}
	s.personas = s.personasFrom(ev)
	s.publish(ev)
	return &ev
}

// personasFrom is each agent's persona in ev, by id ("" for an agent it has none for).
func (s *session) personasFrom(ev event.PersonasGenerated) []string {
	out := make([]string, len(s.agents))
	for _, p := range ev.Personas {
		if i := s.index(p.Agent); i >= 0 {
			out[i] = p.Text
		}
	}
	return out
}

package app

import (
	"cmp"
	"context"
	"path/filepath"

	"massgen/internal/config"
	"massgen/internal/skill"
)

// SkillsDir is the folder of cfg's skills (use_skills): skills_directory, or .agent/skills
// where massgen runs.
func SkillsDir(cfg *config.Config) string {
	return cmp.Or(cfg.Orchestrator.SkillsDirectory, filepath.Join(".agent", "skills"))
}

// skillTools gives the agent the run's skills (use_skills): read_skill, and their list in its
// system prompt. The skills are checked and copied into the run once, before any agent's
// workspace is made: workspaceTools then grants their copy read-only, to the file tools and
// to commands, sandboxed or not.
func (b *toolBuild) skillTools(_ context.Context, at *agentTools) error {
	o := b.cfg.Orchestrator
	if !o.UseSkills {
		return nil
	}
	if b.skills == nil {
		if err := b.openRun(); err != nil {
			return err
		}
		set, err := skill.Load(SkillsDir(b.cfg), filepath.Join(b.tb.run.Dir(), ".skills"))
		if err != nil {
			return errorf(ExitConfig, "%v\nno model was called", err)
		}
		b.skills = set
	}
	t := at.agent.Backend.Tools
	at.set = append(at.set, b.skills.Tool())
	at.notes = append(at.notes, b.skills.Prompt(at.cli != nil || t.CommandLine))
	return nil
}

package prompt

import (
	"fmt"
	"strings"
)

// taskPlanningSection tells an agent with the planning tools (enable_agent_task_planning)
// how to use them, as MassGen's TaskPlanningSection does: plan early, keep the plan current,
// and sum it up at the end of the answer so that the others can judge the work.
const taskPlanningSection = `Task planning: you have planning tools to organise multi-step work. For anything with
several steps, call create_task_plan early, before the heavy work, with a few tasks and their
depends_on; then mark each task in_progress and completed (or verified, once checked) with
update_task_status as you go, add_task when you find more to do, and get_ready_tasks to see
what is unblocked. Skip the plan for a one-step task. Your plan carries over between your
turns. When you have a plan, end your new_answer with a short task summary: each task, done
or not, and what you did.
`

const taskPlanFileNote = `Your plan is also kept in tasks/plan.json in your workspace; the other agents' plans are
in their shared workspaces, under tasks/plan.json.
`

// TaskPlanningSection is the system prompt section of an agent with the planning tools;
// file says its plan is also written to tasks/plan.json in its workspace.
func TaskPlanningSection(file bool) string {
	if file {
		return taskPlanningSection + taskPlanFileNote
	}
	return taskPlanningSection
}

// planDepths are --plan-depth's sizes, MassGen's.
var planDepths = map[string]string{
	"shallow": "5 to 10 tasks, high-level phases only",
	"medium":  "20 to 50 tasks, grouped in sections",
	"deep":    "100 to 200 tasks, step by step",
	"dynamic": "as many tasks as the scope calls for",
}

// PlanModeQuestion is the question of a planning run (--plan): instructions to plan, not to
// do, the work, and to answer with the project plan as JSON, then the person's request.
// depth is --plan-depth; steps, when above 0, asks for about that many tasks instead.
// maxTasks bounds the plan.
func PlanModeQuestion(request, depth string, steps, maxTasks int) string {
	size := planDepths[depth]
	if size == "" {
		size = planDepths["dynamic"]
	}
	if steps > 0 {
		size = fmt.Sprintf("about %d tasks", steps)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `TASK PLANNING MODE: plan the request below; do not carry it out.

Your answer is a project plan that another run of agents will execute later, task by task.
Work out the scope first: what is asked, which assumptions matter and what you decide for
each (no one will answer questions, so decide and say why). Then write the plan.

Write your whole answer as one JSON object, in a fenced json code block if you add anything
around it:
{"tasks": [{"id": "T001", "description": "...", "depends_on": [], "priority": "high",
  "status": "pending", "chunk": "C01_setup",
  "metadata": {"verification": "how to tell it is done", "verification_group": "setup"}}]}

Rules for the plan:
- Plan size: %s; at most %d tasks.
- Each task has a unique id and a description that says what to produce and how, so that the
  executor needs to ask nothing; depends_on lists ids of tasks that must be done first, with no
  cycles; priority is high, medium or low; status is pending.
- Each task says how to verify it (metadata.verification), checking the product first.
- Outcomes over implementation details; every task must be needed.
A new_answer that holds no valid plan is refused with what to fix. When voting, prefer the
plan that would produce the best result when executed, not the longest.

USER'S REQUEST:
%s`, size, maxTasks, request)
	return b.String()
}

// ExecutePlanQuestion is the question of an execution run (--execute-plan): the planned
// request, extra instructions given with the run ("" for none), and how to work through the
// plan every agent starts with.
func ExecutePlanQuestion(request, extra string, tasks int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `PLAN EXECUTION MODE: carry out the request below by executing its task plan.

Your task plan already holds the %d planned tasks. Call get_ready_tasks to see what to start
with, mark each task in_progress, then completed with completion_notes when it is done, and
verified once you have checked that it works; add_task for work the plan missed. Execute every
task; your answer is the finished work, ending with a short summary of the tasks and their
status. When judging the other answers, judge the work itself: a task count is context, not
quality.

THE REQUEST:
%s`, tasks, request)
	if strings.TrimSpace(extra) != "" {
		fmt.Fprintf(&b, "\n\nINSTRUCTIONS FOR THIS RUN:\n%s", extra)
	}
	return b.String()
}

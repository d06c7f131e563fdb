package config

import "sort"

// Wire protocols a backend type speaks (BackendType.Protocol).
const (
	ProtocolResponses = "responses" // OpenAI Responses API
	ProtocolChat      = "chat"      // OpenAI-compatible Chat Completions
	ProtocolMessages  = "messages"  // Anthropic Messages API
	ProtocolGemini    = "gemini"    // Gemini generateContent
	ProtocolScripted  = "scripted"  // offline, deterministic (no network)
	ProtocolCLI       = "cli"       // a coding-agent CLI run as a subprocess (internal/cliagent)
	ProtocolOther     = "other"     // SDK or subprocess based MassGen types
)

// CustomModel is the DefaultModel of types that have no default: backend.model is required.
const CustomModel = "custom"

// BackendType describes one value of backend.type.
type BackendType struct {
	Name     string
	Protocol string
	// DefaultBaseURL is used when the config sets no base_url ("" when there is none).
	DefaultBaseURL string
	// APIKeyEnv lists the environment variables tried in order when the config sets no api_key;
	// nil when the type needs no key. For chatcompletion the provider picks the variable from
	// the base_url host first, as MassGen does, and falls back to these.
	APIKeyEnv []string
	// DefaultModel fills in a missing backend.model; CustomModel means model is required and
	// "" that the type never needs one.
	DefaultModel string
	// Implemented says this build can run the type. A known type that is not implemented is
	// refused with "not supported yet in this build"; flip it here when its provider lands.
	Implemented bool
	// Refused marks MassGen types this port does not support at all yet (ag2, claude_code, ...).
	Refused bool
	// Instead says what to use in place of a refused type.
	Instead string
	// Capabilities checked by the validator for enable_web_search, enable_code_execution and
	// enable_code_interpreter.
	WebSearch, CodeExecution, CodeInterpreter bool
}

// BackendTypes is every backend type a config may name, by name. Names are case-sensitive.
var BackendTypes = map[string]BackendType{
	"openai": {Name: "openai", Protocol: ProtocolResponses, DefaultBaseURL: "https://api.openai.com/v1",
		APIKeyEnv: []string{"OPENAI_API_KEY"}, DefaultModel: "gpt-5.4", Implemented: true,
		WebSearch: true, CodeExecution: true, CodeInterpreter: true},
	"claude": {Name: "claude", Protocol: ProtocolMessages, DefaultBaseURL: "https://api.anthropic.com",
		APIKeyEnv: []string{"ANTHROPIC_API_KEY"}, DefaultModel: "claude-opus-4-6", Implemented: true,
		WebSearch: true, CodeExecution: true},
	// The coding-agent CLIs use the key when one is set, else the CLI's own login.
	"claude_code": {Name: "claude_code", Protocol: ProtocolCLI, APIKeyEnv: []string{"CLAUDE_CODE_API_KEY", "ANTHROPIC_API_KEY"},
		DefaultModel: "claude-sonnet-4-5-20250929", Implemented: true},
	"codex": {Name: "codex", Protocol: ProtocolCLI, APIKeyEnv: []string{"OPENAI_API_KEY"}, DefaultModel: "gpt-5.4",
		Implemented: true},
	// copilot's key is for a custom endpoint (base_url, BYOK); without one it uses the GitHub
	// login of `copilot login`.
	"copilot": {Name: "copilot", Protocol: ProtocolCLI, APIKeyEnv: []string{"COPILOT_PROVIDER_API_KEY"}, DefaultModel: "gpt-5-mini",
		Implemented: true},
	"gemini_cli": {Name: "gemini_cli", Protocol: ProtocolCLI, APIKeyEnv: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"},
		DefaultModel: "gemini-3.1-pro-preview", Implemented: true},
	"antigravity_cli": {Name: "antigravity_cli", Protocol: ProtocolOther, APIKeyEnv: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"},
		DefaultModel: "gemini-3.5-flash", Refused: true, Instead: useAPI("gemini", "the Gemini API")},
	"gemini": {Name: "gemini", Protocol: ProtocolGemini, DefaultBaseURL: "https://generativelanguage.googleapis.com",
		APIKeyEnv: []string{"GOOGLE_API_KEY", "GEMINI_API_KEY"}, DefaultModel: "gemini-3-flash-preview", Implemented: true,
		WebSearch: true, CodeExecution: true},
	"grok": {Name: "grok", Protocol: ProtocolChat, DefaultBaseURL: "https://api.x.ai/v1",
		APIKeyEnv: []string{"XAI_API_KEY"}, DefaultModel: "grok-4", Implemented: true, WebSearch: true},
	"azure_openai": {Name: "azure_openai", Protocol: ProtocolChat, APIKeyEnv: []string{"AZURE_OPENAI_API_KEY"},
		DefaultModel: "gpt-4o", Refused: true, WebSearch: true, CodeExecution: true, CodeInterpreter: true,
		Instead: "use type: chatcompletion with base_url: https://<resource>.openai.azure.com/openai/v1/, model: <deployment> and your Azure key in api_key"},
	"chatcompletion": {Name: "chatcompletion", Protocol: ProtocolChat, DefaultBaseURL: "https://api.openai.com/v1",
		APIKeyEnv: []string{"OPENAI_API_KEY"}, DefaultModel: CustomModel, Implemented: true},
	"cerebras": chatType("cerebras", "https://api.cerebras.ai/v1", "llama-3.3-70b", "CEREBRAS_API_KEY"),
	"together": chatType("together", "https://api.together.xyz/v1",
		"meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo", "TOGETHER_API_KEY"),
	"fireworks": chatType("fireworks", "https://api.fireworks.ai/inference/v1",
		"accounts/fireworks/models/llama-v3p3-70b-instruct", "FIREWORKS_API_KEY"),
	"groq":       chatType("groq", "https://api.groq.com/openai/v1", "llama-3.3-70b-versatile", "GROQ_API_KEY"),
	"openrouter": withWebSearch(chatType("openrouter", "https://openrouter.ai/api/v1", CustomModel, "OPENROUTER_API_KEY")),
	"moonshot": chatType("moonshot", "https://api.moonshot.cn/v1", "moonshot-v1-128k",
		"MOONSHOT_API_KEY", "KIMI_API_KEY"),
	"nvidia_nim": chatType("nvidia_nim", "https://integrate.api.nvidia.com/v1", "moonshotai/kimi-k2.5", "NGC_API_KEY"),
	"nebius":     chatType("nebius", "https://api.studio.nebius.ai/v1", "Qwen/Qwen3-4B-fast", "NEBIUS_API_KEY"),
	// MassGen sets no base URL for poe and zai (the client then hits OpenAI); we use the
	// providers' documented endpoints.
	"poe": chatType("poe", "https://api.poe.com/v1", CustomModel, "POE_API_KEY"),
	"qwen": chatType("qwen", "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", "qwen-max",
		"QWEN_API_KEY"),
	"zai":      chatType("zai", "https://api.z.ai/api/paas/v4/", "glm-4.5", "ZAI_API_KEY"),
	"lmstudio": chatType("lmstudio", "http://localhost:1234/v1", CustomModel),
	"vllm":     chatType("vllm", "http://localhost:8000/v1", CustomModel, "VLLM_API_KEY"),
	"sglang":   chatType("sglang", "http://localhost:30000/v1", CustomModel, "SGLANG_API_KEY"),
	"deepseek": chatType("deepseek", "https://api.deepseek.com/v1", "deepseek-chat", "DEEPSEEK_API_KEY"),
	"ollama":   chatType("ollama", "http://localhost:11434/v1", CustomModel),
	"inference": {Name: "inference", Protocol: ProtocolOther, DefaultModel: CustomModel, Refused: true,
		Instead: "use type: vllm or sglang, or chatcompletion with the server's base_url"},
	"ag2":     {Name: "ag2", Protocol: ProtocolOther, Refused: true, CodeExecution: true, Instead: noFramework},
	"autogen": {Name: "autogen", Protocol: ProtocolOther, Refused: true, CodeExecution: true, Instead: noFramework},
	"uitars": {Name: "uitars", Protocol: ProtocolOther, DefaultModel: CustomModel, Refused: true,
		Instead: "there is no equivalent yet: GUI automation is not built"},
	"scripted": {Name: "scripted", Protocol: ProtocolScripted, DefaultModel: "scripted",
		Implemented: true},
}

func chatType(name, baseURL, model string, keyEnv ...string) BackendType {
	return BackendType{Name: name, Protocol: ProtocolChat, DefaultBaseURL: baseURL, APIKeyEnv: keyEnv,
		DefaultModel: model, Implemented: true}
}

// withWebSearch marks a chat type whose service has a web search of its own (OpenRouter's web
// plugin, MassGen v0.1.30).
func withWebSearch(t BackendType) BackendType {
	t.WebSearch = true
	return t
}

const noFramework = "there is no equivalent yet; an API type such as openai or claude with cwd and enable_mcp_command_line runs code in a workspace"

// useAPI is the advice for an agent CLI or SDK type: the provider's API type, with the
// workspace tools standing in for the CLI's own.
func useAPI(typ, api string) string {
	return "use type: " + typ + " (" + api + "), with cwd and enable_mcp_command_line for file and shell tools"
}

// BackendTypeNames lists the types this build runs, sorted, scripted first: the names messages
// offer. Refused types are left out; their errors say what to use instead.
func BackendTypeNames() []string {
	var names []string
	for _, n := range allBackendTypeNames() {
		if BackendTypes[n].Implemented {
			names = append(names, n)
		}
	}
	return names
}

// allBackendTypeNames lists every name in BackendTypes, sorted, scripted first.
func allBackendTypeNames() []string {
	names := make([]string, 0, len(BackendTypes))
	for n := range BackendTypes {
		if n != "scripted" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if _, ok := BackendTypes["scripted"]; ok {
		names = append([]string{"scripted"}, names...)
	}
	return names
}

package config

import (
	"net/url"
	"slices"
	"sort"
	"strings"
)

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

// BackendType is one row of the backend table: every fact about one value of backend.type.
// The other packages ask this table (through the functions below) rather than keep lists of
// their own, so adding an OpenAI-compatible preset is one row.
type BackendType struct {
	Name     string
	Protocol string
	// DefaultBaseURL is used when the config sets no base_url ("" when there is none).
	DefaultBaseURL string
	// BaseURLEnv is the variable the type's official SDK, or its CLI, reads its endpoint from
	// (openai-go's DefaultClientOptions, anthropic-sdk-go's, google.golang.org/genai's
	// getBaseURL), so that the Python MassGen built on those SDKs and this build honour the
	// same one. Only this variable is taken: the providers never let an SDK read the
	// environment, which would also pick up keys, organisations and headers.
	BaseURLEnv string
	// APIKeyEnv lists the environment variables tried in order when the config sets no api_key;
	// nil when the type needs no key.
	APIKeyEnv []string
	// KeyHosts are base_url host fragments of this type's service: chatcompletion pointed at
	// one reads this type's key (APIKeyEnv[0]) first, as MassGen does.
	KeyHosts []string
	// KeyOptional says the type runs without a key: a server on the user's own machine that
	// accepts requests without one, the scripted backend, or a coding-agent CLI on its own login.
	KeyOptional bool
	// DefaultModel fills in a missing backend.model; CustomModel means model is required and
	// "" that the type never needs one. It is also the model of the team built from keys alone.
	DefaultModel string
	// ModelPrefixes are the lower-case starts of model names that mean this type, for a
	// backend without type and for --model without --backend.
	ModelPrefixes []string
	// Implemented says this build can run the type. A known type that is not implemented is
	// refused with "not supported yet in this build"; flip it here when its provider lands.
	Implemented bool
	// Refused marks MassGen types this port does not support at all yet (ag2, claude_code, ...).
	Refused bool
	// Instead says what to use in place of a refused type.
	Instead string
	// APIVersionEnv is the variable read for the API version when the config sets no
	// api_version, DefaultAPIVersion the version used without either (azure_openai only, whose
	// every request carries ?api-version=).
	APIVersionEnv, DefaultAPIVersion string
	// Capabilities checked by the validator for enable_web_search, enable_code_execution and
	// enable_code_interpreter.
	WebSearch, CodeExecution, CodeInterpreter bool
}

// BackendTypes is every backend type a config may name, by name. Names are case-sensitive.
var BackendTypes = map[string]BackendType{
	"openai": {Name: "openai", Protocol: ProtocolResponses, DefaultBaseURL: "https://api.openai.com/v1", BaseURLEnv: "OPENAI_BASE_URL",
		APIKeyEnv: []string{"OPENAI_API_KEY"}, DefaultModel: "gpt-5.4", ModelPrefixes: []string{"gpt-", "o1", "o3", "o4", "chatgpt-"},
		Implemented: true, WebSearch: true, CodeExecution: true, CodeInterpreter: true},
	"claude": {Name: "claude", Protocol: ProtocolMessages, DefaultBaseURL: "https://api.anthropic.com", BaseURLEnv: "ANTHROPIC_BASE_URL",
		APIKeyEnv: []string{"ANTHROPIC_API_KEY"}, DefaultModel: "claude-opus-4-6", ModelPrefixes: []string{"claude-"},
		Implemented: true, WebSearch: true, CodeExecution: true},
	// The coding-agent CLIs use the key when one is set, else the CLI's own login. They read
	// their base-URL variable themselves; massgen passes it on deliberately.
	// claude_code's enable_web_search allows the CLI's own WebSearch tool.
	"claude_code": cliType("claude_code", "ANTHROPIC_BASE_URL", "claude-sonnet-4-5-20250929", "CLAUDE_CODE_API_KEY", "ANTHROPIC_API_KEY").withWebSearch(),
	"codex":       cliType("codex", "OPENAI_BASE_URL", "gpt-5.4", "OPENAI_API_KEY"),
	// copilot's key is for a custom endpoint (base_url, BYOK); without one it uses the GitHub
	// login of `copilot login`.
	"copilot":    cliType("copilot", "COPILOT_PROVIDER_BASE_URL", "gpt-5-mini", "COPILOT_PROVIDER_API_KEY"),
	"gemini_cli": cliType("gemini_cli", "GOOGLE_GEMINI_BASE_URL", "gemini-3.1-pro-preview", "GEMINI_API_KEY", "GOOGLE_API_KEY"),
	"antigravity_cli": {Name: "antigravity_cli", Protocol: ProtocolOther, APIKeyEnv: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"},
		DefaultModel: "gemini-3.5-flash", Refused: true, Instead: useAPI("gemini", "the Gemini API")},
	// GEMINI_BASE_URL is read by no SDK and is not taken.
	"gemini": {Name: "gemini", Protocol: ProtocolGemini, DefaultBaseURL: "https://generativelanguage.googleapis.com",
		BaseURLEnv: "GOOGLE_GEMINI_BASE_URL", APIKeyEnv: []string{"GOOGLE_API_KEY", "GEMINI_API_KEY"}, DefaultModel: "gemini-3-flash-preview",
		ModelPrefixes: []string{"gemini-"}, Implemented: true, WebSearch: true, CodeExecution: true},
	"grok": {Name: "grok", Protocol: ProtocolChat, DefaultBaseURL: "https://api.x.ai/v1", APIKeyEnv: []string{"XAI_API_KEY"},
		KeyHosts: []string{"x.ai"}, DefaultModel: "grok-4", ModelPrefixes: []string{"grok-"}, Implemented: true, WebSearch: true},
	// Azure OpenAI speaks Chat Completions at {endpoint}/openai/deployments/{model}/chat/completions,
	// model being the deployment's name. Every resource has its own host, so there is no default
	// endpoint: base_url (or azure_endpoint) or AZURE_OPENAI_ENDPOINT names it, and the key goes
	// there only, in an api-key header (internal/provider/chat keeps redirects to its origin).
	// Chat Completions on Azure has no hosted web search or code interpreter (those belong to
	// its Responses and Assistants APIs), so none is offered.
	"azure_openai": {Name: "azure_openai", Protocol: ProtocolChat, BaseURLEnv: "AZURE_OPENAI_ENDPOINT",
		APIKeyEnv: []string{"AZURE_OPENAI_API_KEY"}, APIVersionEnv: "AZURE_OPENAI_API_VERSION", DefaultAPIVersion: "2024-12-01-preview",
		DefaultModel: CustomModel, Implemented: true},
	// chatcompletion takes OPENAI_BASE_URL only while its base_url is OpenAI's default: its key
	// then comes from OPENAI_API_KEY, and someone who sends OpenAI traffic through a proxy
	// means all of it. The presets have their own hosts and keys, which an OpenAI variable must
	// not redirect.
	"chatcompletion": {Name: "chatcompletion", Protocol: ProtocolChat, DefaultBaseURL: "https://api.openai.com/v1", BaseURLEnv: "OPENAI_BASE_URL",
		APIKeyEnv: []string{"OPENAI_API_KEY"}, DefaultModel: CustomModel, Implemented: true},
	"cerebras": chatType("cerebras", "https://api.cerebras.ai/v1", "llama-3.3-70b", "CEREBRAS_API_KEY").hosts("cerebras.ai"),
	"together": chatType("together", "https://api.together.xyz/v1",
		"meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo", "TOGETHER_API_KEY").hosts("together.xyz"),
	"fireworks": chatType("fireworks", "https://api.fireworks.ai/inference/v1",
		"accounts/fireworks/models/llama-v3p3-70b-instruct", "FIREWORKS_API_KEY").hosts("fireworks.ai"),
	"groq": chatType("groq", "https://api.groq.com/openai/v1", "llama-3.3-70b-versatile", "GROQ_API_KEY").hosts("groq.com"),
	// OpenRouter's web plugin is a web search of its own (MassGen v0.1.30).
	"openrouter": chatType("openrouter", "https://openrouter.ai/api/v1", CustomModel, "OPENROUTER_API_KEY").hosts("openrouter.ai").withWebSearch(),
	"moonshot": chatType("moonshot", "https://api.moonshot.cn/v1", "moonshot-v1-128k",
		"MOONSHOT_API_KEY", "KIMI_API_KEY").hosts("moonshot.ai", "moonshot.cn"),
	"nvidia_nim": chatType("nvidia_nim", "https://integrate.api.nvidia.com/v1", "moonshotai/kimi-k2.5", "NGC_API_KEY"),
	"nebius":     chatType("nebius", "https://api.studio.nebius.ai/v1", "Qwen/Qwen3-4B-fast", "NEBIUS_API_KEY").hosts("nebius"),
	// MassGen sets no base URL for poe and zai (the client then hits OpenAI); we use the
	// providers' documented endpoints.
	"poe": chatType("poe", "https://api.poe.com/v1", CustomModel, "POE_API_KEY").hosts("poe.com"),
	"qwen": chatType("qwen", "https://dashscope-intl.aliyuncs.com/compatible-mode/v1", "qwen-max",
		"QWEN_API_KEY").hosts("aliyuncs.com"),
	"zai":      chatType("zai", "https://api.z.ai/api/paas/v4/", "glm-4.5", "ZAI_API_KEY").hosts("z.ai", "bigmodel.cn").models("glm-"),
	"lmstudio": chatType("lmstudio", "http://localhost:1234/v1", CustomModel).local(),
	"vllm":     chatType("vllm", "http://localhost:8000/v1", CustomModel, "VLLM_API_KEY").local(),
	"sglang":   chatType("sglang", "http://localhost:30000/v1", CustomModel, "SGLANG_API_KEY").local(),
	"deepseek": chatType("deepseek", "https://api.deepseek.com/v1", "deepseek-chat", "DEEPSEEK_API_KEY").hosts("deepseek.com").models("deepseek-"),
	"ollama":   chatType("ollama", "http://localhost:11434/v1", CustomModel).local(),
	"inference": {Name: "inference", Protocol: ProtocolOther, DefaultModel: CustomModel, Refused: true,
		Instead: "use type: vllm or sglang, or chatcompletion with the server's base_url"},
	"ag2":     {Name: "ag2", Protocol: ProtocolOther, Refused: true, CodeExecution: true, Instead: noFramework},
	"autogen": {Name: "autogen", Protocol: ProtocolOther, Refused: true, CodeExecution: true, Instead: noFramework},
	"uitars": {Name: "uitars", Protocol: ProtocolOther, DefaultModel: CustomModel, Refused: true,
		Instead: "there is no equivalent yet: GUI automation is not built"},
	"scripted": {Name: "scripted", Protocol: ProtocolScripted, DefaultModel: "scripted", KeyOptional: true, Implemented: true},
}

// TeamTypes are the providers of the team built from the keys that are set, in its order;
// the setup wizard lists them first too.
var TeamTypes = []string{"openai", "claude", "gemini", "grok"}

func chatType(name, baseURL, model string, keyEnv ...string) BackendType {
	return BackendType{Name: name, Protocol: ProtocolChat, DefaultBaseURL: baseURL, APIKeyEnv: keyEnv,
		DefaultModel: model, Implemented: true}
}

func cliType(name, baseURLEnv, model string, keyEnv ...string) BackendType {
	return BackendType{Name: name, Protocol: ProtocolCLI, BaseURLEnv: baseURLEnv, APIKeyEnv: keyEnv, KeyOptional: true,
		DefaultModel: model, Implemented: true}
}

func (t BackendType) hosts(h ...string) BackendType { t.KeyHosts = h; return t }

func (t BackendType) models(prefix ...string) BackendType { t.ModelPrefixes = prefix; return t }

func (t BackendType) local() BackendType { t.KeyOptional = true; return t }

func (t BackendType) withWebSearch() BackendType { t.WebSearch = true; return t }

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

// InferType returns the backend type a model name means (ModelPrefixes), or "" when the name
// does not say.
func InferType(model string) string {
	m := strings.ToLower(model)
	for _, n := range allBackendTypeNames() {
		for _, p := range BackendTypes[n].ModelPrefixes {
			if strings.HasPrefix(m, p) {
				return n
			}
		}
	}
	return ""
}

// KeyEnvs lists the variables that may hold the key of a backend of type typ at baseURL, in
// the order they are tried: for chatcompletion first the key of every preset whose host
// baseURL names (KeyHosts), as MassGen does, then the type's own (APIKeyEnv).
func KeyEnvs(typ, baseURL string) []string {
	var envs []string
	if typ == "chatcompletion" {
		host := urlHost(baseURL)
		for _, n := range allBackendTypeNames() {
			bt := BackendTypes[n]
			for _, h := range bt.KeyHosts {
				if hostIs(host, h) && !slices.Contains(envs, bt.APIKeyEnv[0]) {
					envs = append(envs, bt.APIKeyEnv[0])
				}
			}
		}
	}
	for _, e := range BackendTypes[typ].APIKeyEnv {
		if !slices.Contains(envs, e) {
			envs = append(envs, e)
		}
	}
	return envs
}

// urlHost is the lower-case host name of a base URL, "" when it has none.
func urlHost(baseURL string) string {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
}

// hostIs reports whether host is the service a KeyHosts entry names: that domain or a name
// under it ("x.ai" is api.x.ai, not max.ai nor a path or query that mentions x.ai), or, for an
// entry without a dot, a host with that label ("nebius" is api.studio.nebius.ai). MassGen
// matches anywhere in the URL, which would hand a preset's key to any host whose URL names it.
func hostIs(host, entry string) bool {
	if host == "" {
		return false
	}
	if !strings.Contains(entry, ".") {
		return slices.Contains(strings.Split(host, "."), entry)
	}
	return host == entry || strings.HasSuffix(host, "."+entry)
}

// KeyEnvNames lists, sorted and once each, every variable any backend type reads a key from.
func KeyEnvNames() []string {
	var out []string
	for _, bt := range BackendTypes {
		out = append(out, bt.APIKeyEnv...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// typesSpeaking lists the types of protocol p, sorted.
func typesSpeaking(p string) []string {
	var out []string
	for _, n := range allBackendTypeNames() {
		if BackendTypes[n].Protocol == p {
			out = append(out, n)
		}
	}
	return out
}

// modelPrefixes lists every type's ModelPrefixes, for the docs.
func modelPrefixes() []string {
	var out []string
	for _, n := range allBackendTypeNames() {
		out = append(out, BackendTypes[n].ModelPrefixes...)
	}
	return out
}

package usage

// windows are the models' context windows in tokens (input and output together), as each
// provider documents them, matched like prices. Compression (memory.compression,
// filesystem_memory) sizes a conversation against them.
var windows = map[string]int{
	// OpenAI
	"gpt-5.5": 400_000, "gpt-5.4": 400_000, "gpt-5": 400_000, "gpt-5-codex": 400_000,
	"gpt-4.1": 1_047_576, "gpt-4o": 128_000, "o3": 200_000, "o3-mini": 200_000, "o4-mini": 200_000,
	// Anthropic
	"claude-opus-4-6": 200_000, "claude-sonnet-4-6": 200_000, "claude-opus-4-5": 200_000, "claude-opus-4-1": 200_000,
	"claude-opus-4": 200_000, "claude-sonnet-4-5": 200_000, "claude-sonnet-4": 200_000, "claude-haiku-4-5": 200_000,
	"claude-3-7-sonnet": 200_000, "claude-3-5-sonnet": 200_000, "claude-3-5-haiku": 200_000, "claude-3": 200_000,
	// Google
	"gemini-3": 1_048_576, "gemini-2.5": 1_048_576, "gemini-2.0-flash": 1_048_576,
	// xAI
	"grok-4": 256_000, "grok-4-fast": 2_000_000, "grok-3": 131_072,
	// Others
	"deepseek-chat": 128_000, "deepseek-reasoner": 128_000, "llama-3.3-70b-versatile": 131_072,
	"llama-3.1-8b-instant": 131_072, "openai/gpt-oss-120b": 131_072, "openai/gpt-oss-20b": 131_072,
	"qwen-max": 32_768, "glm-4.5": 128_000, "glm-4.6": 200_000, "kimi-k2": 128_000,
}

var windowKeys = longestFirst(windows)

// DefaultContextWindow is assumed for a model the table does not know: small enough that a
// conversation is compressed before almost any current model would refuse it.
const DefaultContextWindow = 32_768

// ContextWindow is model's context window in tokens and whether the table knows it (else
// DefaultContextWindow).
func ContextWindow(model string) (int, bool) {
	if n, ok := find(windows, windowKeys, model); ok {
		return n, true
	}
	return DefaultContextWindow, false
}

package durable

import (
	"encoding/json"
	"strconv"

	"massgen/internal/config"
)

// The memory: blocks (top level and each agent's) and filesystem_memory travel whole: each
// worker opens the store and compresses as the config says.

// memoryDoc is a memory: block that reads back as m, every setting written out so that an
// agent's block over the top-level one arrives as the agent's settings.
func memoryDoc(m config.Memory) obj {
	persist := obj{"enabled": m.Persistent, "on_disk": !m.InProcess}
	putStr(persist, "session_name", m.SessionName)
	emb := obj{}
	putStr(emb, "provider", m.EmbeddingProvider)
	putStr(emb, "model", m.EmbeddingModel)
	if len(emb) > 0 {
		persist["embedding"] = emb
	}
	if m.StorePath != "" {
		persist["qdrant"] = obj{"path": m.StorePath}
	}
	retrieval := obj{"exclude_recent": m.ExcludeRecent}
	putInt(retrieval, "limit", m.RetrievalLimit)
	out := obj{"enabled": m.Enabled, "persistent_memory": persist, "retrieval": retrieval}
	if c := compressionDoc(m.Compression); len(c) > 0 {
		out["compression"] = c
	}
	return out
}

func compressionDoc(c config.Compression) obj {
	out := obj{}
	if c.Trigger > 0 {
		out["trigger_threshold"] = number(c.Trigger)
	}
	if c.Target > 0 {
		out["target_ratio"] = number(c.Target)
	}
	return out
}

func number(x float64) json.Number { return json.Number(strconv.FormatFloat(x, 'g', -1, 64)) }

// memoryDocs puts cfg's memory blocks into doc and its agents' (agents[i] is agent i's).
func memoryDocs(doc obj, agents []any, cfg *config.Config) {
	if cfg.Memory != (config.Memory{}) {
		doc["memory"] = memoryDoc(cfg.Memory)
	}
	for i, a := range cfg.Agents {
		if a.Memory != nil {
			agents[i].(obj)["memory"] = memoryDoc(*a.Memory)
		}
	}
	if fm := cfg.FilesystemMemory; fm != (config.FilesystemMemory{}) {
		out := obj{"enabled": fm.Enabled}
		if c := compressionDoc(fm.Compression); len(c) > 0 {
			out["compression"] = c
		}
		doc["filesystem_memory"] = out
	}
}

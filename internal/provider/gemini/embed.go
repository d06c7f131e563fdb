package gemini

import (
	"context"
	"fmt"

	"google.golang.org/genai"

	"massgen/internal/provider"
)

// Embedder calls Gemini's embedContent (persistent memory). It is safe for concurrent use.
type Embedder struct {
	p     *Provider
	model string
}

// NewEmbedder builds an embedder for o.Model with the same client rules as New (the key and
// endpoint are o's, never the environment's).
func NewEmbedder(o provider.Options) (*Embedder, error) {
	p, err := New(o)
	if err != nil {
		return nil, err
	}
	return &Embedder{p: p, model: o.Model}, nil
}

// Model is "type/model".
func (e *Embedder) Model() string { return e.p.name + "/" + e.model }

// Embed returns one vector per text. The Gemini API reports no usage for embeddings: it is
// estimated from the texts' sizes.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, provider.Usage, error) {
	contents := make([]*genai.Content, len(texts))
	chars := 0
	for i, t := range texts {
		contents[i] = genai.NewContentFromText(t, genai.RoleUser)
		chars += len(t)
	}
	res, err := e.p.client.Models.EmbedContent(ctx, e.model, contents, nil)
	if err != nil {
		return nil, provider.Usage{}, e.p.wireError(ctx, e.model, err)
	}
	if len(res.Embeddings) != len(texts) {
		return nil, provider.Usage{}, fmt.Errorf("%s embeddings: %d vectors for %d texts", e.p.name, len(res.Embeddings), len(texts))
	}
	out := make([][]float32, len(texts))
	for i, emb := range res.Embeddings {
		if emb == nil {
			return nil, provider.Usage{}, fmt.Errorf("%s embeddings: no vector for text %d", e.p.name, i+1)
		}
		out[i] = emb.Values
	}
	return out, provider.Usage{InputTokens: int64(chars/4 + 1), Estimated: true}, nil
}

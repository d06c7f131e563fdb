package openai

import (
	"context"
	"errors"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"massgen/internal/provider"
)

// Embedder calls the embeddings endpoint of OpenAI or any OpenAI-compatible service
// (persistent memory). It is safe for concurrent use.
type Embedder struct {
	o   provider.Options
	svc openai.EmbeddingService
}

// NewEmbedder builds an embedder for o.Model at o.BaseURL (OpenAI's by default), reading
// nothing from the environment.
func NewEmbedder(o provider.Options) *Embedder {
	if o.Type == "" {
		o.Type = "openai"
	}
	return &Embedder{o: o, svc: openai.NewEmbeddingService(requestOptions(o)...)}
}

// Model is "type/model".
func (e *Embedder) Model() string { return e.o.Type + "/" + e.o.Model }

// maxEmbedBody bounds an embeddings response: 20 vectors of 3,072 numbers are under 2 MB.
const maxEmbedBody = 16 << 20

// Embed returns one vector per text.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, provider.Usage, error) {
	res, err := e.svc.New(ctx, openai.EmbeddingNewParams{
		Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
		Model:          openai.EmbeddingModel(e.o.Model),
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
	}, option.WithMiddleware(limitEvents(maxEmbedBody)))
	if err != nil {
		var apiErr *openai.Error
		if errors.As(err, &apiErr) {
			return nil, provider.Usage{}, provider.StatusError(e.o, apiErr.StatusCode, e.o.Redactor().Message(apiErr.Message))
		}
		return nil, provider.Usage{}, fmt.Errorf("%s embeddings: %s", e.o.Type, e.o.Redactor().Message(err.Error()))
	}
	if len(res.Data) != len(texts) {
		return nil, provider.Usage{}, fmt.Errorf("%s embeddings: %d vectors for %d texts", e.o.Type, len(res.Data), len(texts))
	}
	out := make([][]float32, len(texts))
	for _, d := range res.Data {
		if d.Index < 0 || int(d.Index) >= len(out) || out[d.Index] != nil {
			return nil, provider.Usage{}, fmt.Errorf("%s embeddings: vector index %d out of place", e.o.Type, d.Index)
		}
		v := make([]float32, len(d.Embedding))
		for i, x := range d.Embedding {
			v[i] = float32(x)
		}
		out[d.Index] = v
	}
	return out, provider.Usage{InputTokens: res.Usage.PromptTokens}, nil
}

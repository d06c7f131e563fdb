package media

import (
	"context"
	"strings"
	"sync"

	"massgen/internal/tool"
)

// eachBounded runs do(i) for every i below n, at most workers at a time; an item that has not
// started when ctx ends gets skipped(i, ctx.Err()) instead. It returns when all are done.
func eachBounded(ctx context.Context, n, workers int, do func(i int), skipped func(i int, err error)) {
	sem := make(chan struct{}, max(workers, 1))
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				skipped(i, ctx.Err())
				return
			}
			defer func() { <-sem }()
			do(i)
		})
	}
	wg.Wait()
}

// batchResult is a batch call's result (MassGen's shape: batch, total, succeeded, failed,
// results, plus extra); it is an error only when no item succeeded.
func batchResult(op string, items []map[string]any, extra map[string]any) tool.Result {
	ok := 0
	for _, it := range items {
		if it["success"] == true {
			ok++
		}
	}
	body := map[string]any{"batch": true, "total": len(items), "succeeded": ok, "failed": len(items) - ok, "results": items}
	for k, v := range extra {
		body[k] = v
	}
	res := result(op, body)
	if ok == 0 {
		res.IsError = true
		res.Content = strings.Replace(res.Content, `"success": true`, `"success": false`, 1)
	}
	return res
}

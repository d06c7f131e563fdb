package gemini

import (
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"
)

// The genai SDK's own retry loop (HTTPOptions.RetryOptions) backs off on a fixed schedule and
// ignores Retry-After, so retries live here, in the HTTP transport under the SDK: a request that
// fails before the first byte of its response (a connection error, or a 408, 429 or 5xx status)
// is sent again, at most retries times, after the delay the service asked for. Once a 200 arrives
// nothing is retried: a stream that breaks later is the engine's to retry.

// maxRetryAfter bounds a delay the service asks for; a longer one falls back to the backoff.
const maxRetryAfter = 60 * time.Second

// retryTransport retries failed requests before the response starts. It is safe for concurrent
// use if base is.
type retryTransport struct {
	base    http.RoundTripper // nil means http.DefaultTransport
	retries int
	// backoff is the delay before retry n (0-based) when the service names none; nil means
	// exponential backoff from 500 ms, capped at 8 s, with jitter.
	backoff func(n int) time.Duration
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	ctx := req.Context()
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	for n := 0; ; n++ {
		r := req
		if n > 0 {
			r = req.Clone(ctx)
			if req.GetBody != nil {
				body, err := req.GetBody()
				if err != nil {
					return nil, err
				}
				r.Body = body
			}
		}
		resp, err := base.RoundTrip(r)
		if n >= t.retries || !replayable || ctx.Err() != nil || !retryable(resp, err) {
			return resp, err
		}
		wait, ok := serviceDelay(resp, time.Now())
		if !ok {
			wait = t.delay(n)
		}
		if resp != nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
			resp.Body.Close()
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
	}
}

func (t *retryTransport) delay(n int) time.Duration {
	if t.backoff != nil {
		return t.backoff(n)
	}
	d := min(500*time.Millisecond<<min(n, 5), 8*time.Second)
	return d/2 + rand.N(d/2+1)
}

// retryable reports whether a failed attempt is worth repeating.
func retryable(resp *http.Response, err error) bool {
	if err != nil {
		return true
	}
	switch s := resp.StatusCode; {
	case s == http.StatusRequestTimeout, s == http.StatusTooManyRequests:
		return true
	case s >= 500 && s != http.StatusNotImplemented:
		return true
	}
	return false
}

// serviceDelay returns the delay the service asked for: the Retry-After header (seconds or an
// HTTP date), or else the google.rpc.RetryInfo retryDelay a Gemini 429 body carries. It reads
// the body only for a 429 without the header; the caller discards the response anyway.
func serviceDelay(resp *http.Response, now time.Time) (time.Duration, bool) {
	if resp == nil {
		return 0, false
	}
	var d time.Duration
	if v := resp.Header.Get("Retry-After"); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil {
			d = time.Duration(s * float64(time.Second))
		} else if at, err := http.ParseTime(v); err == nil {
			d = at.Sub(now)
		} else {
			return 0, false
		}
	} else if resp.StatusCode == http.StatusTooManyRequests {
		var body struct {
			Error struct {
				Details []struct {
					Type       string `json:"@type"`
					RetryDelay string `json:"retryDelay"`
				} `json:"details"`
			} `json:"error"`
		}
		if json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&body) != nil {
			return 0, false
		}
		found := false
		for _, det := range body.Error.Details {
			if det.Type == "type.googleapis.com/google.rpc.RetryInfo" && det.RetryDelay != "" {
				var err error
				if d, err = time.ParseDuration(det.RetryDelay); err == nil {
					found = true
				}
				break
			}
		}
		if !found {
			return 0, false
		}
	} else {
		return 0, false
	}
	if d < 0 || d > maxRetryAfter {
		return 0, false
	}
	return d, true
}

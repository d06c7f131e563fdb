package paraphrase

import (
	"fmt"
	"strings"
)

// strategyText is what each strategy asks of the writer (MassGen's strategy contexts).
var strategyText = map[string]string{
	"balanced":     "Rephrase it naturally, as someone else might ask it: the same meaning with moderately different phrasing.",
	"diverse":      "Rephrase it very differently: the same request in completely different words and structure.",
	"conservative": "Rephrase it lightly: keep the structure, change the word choices.",
	"adaptive":     "Rephrase it in the way that suits its kind of question, with the terms and structure such a question is usually asked in.",
}

const writerSystem = `You rewrite questions. A rewrite must ask for exactly the same information as the original: ` +
	`keep every number, name, constraint, option and requested format; add nothing, drop nothing, answer nothing. ` +
	`Reply with one JSON object and nothing else.`

// writerUser is the writing call's message.
func writerUser(s Settings, q string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Original question:\n<<<\n%s\n>>>\n\n", q)
	fmt.Fprintf(&b, "Write %d different rewrites of it. %s\n", s.Variants, strategyText[s.strategy()])
	if s.ChainOfThought {
		b.WriteString(`First reason briefly about what the question asks and what must not change, then write the rewrites. ` +
			`Reply as {"reasoning": "...", "paraphrases": ["...", ...]}.`)
	} else {
		b.WriteString(`Reply as {"paraphrases": ["...", ...]}.`)
	}
	return b.String()
}

const checkerSystem = `You check rewrites of a question. A rewrite is equivalent when an answer to it is exactly ` +
	`an answer to the original: same information asked for, same numbers, names, constraints, options and format. ` +
	`Reply with one JSON object and nothing else.`

const checkAsk = `For each paraphrase, say whether it is equivalent to the original question, with your ` +
	`confidence from 0 to 1. Reply as {"verdicts": [{"index": 1, "equivalent": true, "confidence": 0.9}, ...]}.`

// Writes generated values as wuu's writer writes them: tests/oracle/go-json-encoder.jsonl (lines
// of values of every kind) and tests/oracle/go-wuu-stream.jsonl (a wuu run whose text, tool
// arguments and unknown members are such values).
//
// wuu (wuu-notes.md) writes each line with Go's json.NewEncoder(w).Encode(map[string]any):
// keys sorted at every depth, `<`, `>`, `&`, U+2028 and U+2029 escaped, floats as
// encoding/json's floatEncoder formats them (plain from 1e-6 to below 1e21, else an exponent
// with e-07 cleaned to e-7), and since Go 1.22 `\b` and `\f` as two-character escapes (wuu's
// go.mod asks for Go 1.26). tests/layouts.rs parses every line and asserts that agentgate's Go
// layout writes the same bytes, and that the stream comes back from wuu to itself, directly and
// through canonical, byte for byte. Deterministic (a fixed seed; Go keeps a seeded math/rand
// source's sequence from release to release): run it again and the file does not change.
//
// The committed recording was made with go1.23.5 (Debian bookworm-backports' golang-1.23-go):
//
//	go run scripts/oracle/go_layout.go tests/oracle
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
)

var rng = rand.New(rand.NewSource(20261206))

var alphabet = []string{"a", "Z", " ", "\"", "\\", "/", "\n", "\r", "\t", "\b", "\f", "\x00", "\x1f", "\x7f",
	"é", "ß", "☃", "\u2028", "\u2029", "<", ">", "&", "🙂", "中", "\u00a0", "\ufeff"}

var specials = []float64{0, math.Copysign(0, -1), 1e-6, 9.99999e-7, 1e-7, 1e20, 1e21, 123456789012345678,
	0.1, 0.1 + 0.2, 5e-324, math.MaxFloat64, 2.5, -3.75e-7, 1e-5, 1e16, 1.5e16, 0.000035, 899.25}

func someFloat() float64 {
	switch rng.Intn(6) {
	case 0:
		return (rng.Float64()*2 - 1) * math.Pow(10, float64(rng.Intn(60)-30))
	case 1:
		return float64(rng.Intn(2000000) - 1000000)
	case 2:
		p := math.Pow(10, float64(rng.Intn(7)+1))
		return math.Round(rng.Float64()*p) / p
	case 3:
		return specials[rng.Intn(len(specials))]
	case 4:
		return float64(rng.Intn(9)+1) * math.Pow(10, float64(rng.Intn(37)-12))
	}
	return rng.Float64() / math.Pow(10, float64(rng.Intn(12)))
}

func someString() string {
	var b strings.Builder
	for n := rng.Intn(8); n > 0; n-- {
		b.WriteString(alphabet[rng.Intn(len(alphabet))])
	}
	return b.String()
}

func someValue(depth int) any {
	kinds := 8
	if depth >= 3 {
		kinds = 5
	}
	switch rng.Intn(kinds) {
	case 0, 4:
		return someFloat()
	case 1:
		if rng.Intn(4) == 0 {
			return rng.Uint64()
		}
		return rng.Int63() - rng.Int63()
	case 2:
		return someString()
	case 3:
		return []any{true, false, nil}[rng.Intn(3)]
	case 5:
		list := []any{}
		for n := rng.Intn(4); n > 0; n-- {
			list = append(list, someValue(depth+1))
		}
		return list
	}
	object := map[string]any{}
	for n := rng.Intn(4); n > 0; n-- {
		key := someString()
		if key == "" {
			key = "k"
		}
		object[key] = someValue(depth + 1)
	}
	return object
}

// write encodes each line json.NewEncoder's way into dir/name.
func write(dir, name string, lines func(emit func(map[string]any))) {
	file, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		panic(err)
	}
	out := bufio.NewWriter(file)
	encoder := json.NewEncoder(out)
	lines(func(line map[string]any) {
		if err := encoder.Encode(line); err != nil {
			panic(err)
		}
	})
	if err := out.Flush(); err != nil {
		panic(err)
	}
	file.Close()
}

func values(emit func(map[string]any)) {
	for n := 0; n < 400; n++ {
		emit(map[string]any{"type": "notice", "text": someString(), "n": n, "value": someValue(0), "f": someFloat()})
	}
}

// stream is a wuu run of three turns as wuu-notes.md and wuu.md describe its events.
func stream(emit func(map[string]any)) {
	thread := "thread-1"
	emit(map[string]any{"type": "thread_started", "thread_id": thread, "provider": "openai", "model": "gpt-5.1-codex", "cwd": "/repo"})
	item, final, turn := 0, "", ""
	for t := 1; t <= 3; t++ {
		turn = fmt.Sprintf("turn-%d", t)
		emit(map[string]any{"type": "turn_started", "thread_id": thread, "turn_id": turn})
		message, input, output := "", 1000*t, 0
		for step := 0; step < 12; step++ {
			ids := map[string]any{"thread_id": thread, "turn_id": turn}
			line := func(kind string, members map[string]any) map[string]any {
				members["type"] = kind
				for k, v := range ids {
					members[k] = v
				}
				return members
			}
			switch rng.Intn(3) {
			case 0:
				delta := someString()
				message += delta
				emit(line("agent_message_delta", map[string]any{"delta": delta}))
			case 1:
				// A member wuu.md does not name: kept as it came.
				delta := someString()
				message += delta
				emit(line("agent_message_delta", map[string]any{"delta": delta, "meta": someValue(1)}))
			default:
				item++
				id := fmt.Sprintf("item-%d", item)
				arguments, err := json.Marshal(map[string]any{"path": someString(), "value": someValue(1)})
				if err != nil {
					panic(err)
				}
				emit(line("tool_started", map[string]any{"item_id": id, "name": "read_file", "arguments": string(arguments)}))
				emit(line("tool_output_delta", map[string]any{"item_id": id, "delta": someString()}))
				emit(line("tool_completed", map[string]any{"item_id": id, "name": "read_file", "status": "completed", "error": ""}))
			}
			output += 10
			emit(line("usage_updated", map[string]any{"input_tokens": input, "output_tokens": output, "cache_creation_tokens": 0, "cache_read_tokens": input / 2}))
		}
		final = message
		emit(map[string]any{"type": "agent_message_final", "thread_id": thread, "turn_id": turn, "message": message})
		emit(map[string]any{"type": "turn_completed", "thread_id": thread, "turn_id": turn, "input_tokens": input, "output_tokens": output,
			"trace_path": "/tmp/trace-" + turn + ".jsonl", "awaiting_auto_continuation": t < 3})
	}
	emit(map[string]any{"type": "result", "status": "completed", "thread_id": thread, "turn_id": turn, "run_id": "run-1",
		"final_message": final, "trace_path": "/tmp/trace.jsonl"})
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run scripts/oracle/go_layout.go tests/oracle")
		os.Exit(2)
	}
	write(os.Args[1], "go-json-encoder.jsonl", values)
	write(os.Args[1], "go-wuu-stream.jsonl", stream)
}

#!/bin/sh
# A custom tool program in another language: it speaks massgen's JSON-lines tool protocol
# with nothing but sh and sed. massgen sends requests with their keys sorted, one per line.
while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in
    *'"op":"describe"'*)
      printf '{"id":%s,"ok":true,"result":{"tools":[' "$id"
      printf '{"name":"shout","description":"Say a name loudly.","parameters":{"type":"object","properties":{"who":{"type":"string","description":"Who to call."},"punct":{"type":"string"}},"required":["who","punct"]}},'
      printf '{"name":"whisper","description":"Say a name softly.","parameters":{"type":"object","properties":{"who":{"type":"string"}}}},'
      printf '{"name":"echo","description":"Return the arguments.","parameters":{"type":"object","properties":{"agent_cwd":{"type":"string"},"agent_id":{"type":"string"},"text":{"type":"string"}},"required":["agent_id","text"]}}'
      printf ']}}\n'
      ;;
    *'"function":"shout"'*)
      who=$(printf '%s\n' "$line" | sed -n 's/.*"who":"\([^"]*\)".*/\1/p')
      punct=$(printf '%s\n' "$line" | sed -n 's/.*"punct":"\([^"]*\)".*/\1/p')
      echo "not a protocol line"
      printf '{"id":%s,"output":"warming up"}\n' "$id"
      printf '{"id":%s,"ok":true,"result":"HEY %s%s"}\n' "$id" "$who" "$punct"
      ;;
    *'"function":"echo"'*)
      args=$(printf '%s\n' "$line" | sed -n 's/.*"args":\({[^}]*}\).*/\1/p')
      printf '{"id":%s,"ok":true,"result":%s}\n' "$id" "$args"
      ;;
    *)
      printf '{"id":%s,"ok":false,"error":"no such tool"}\n' "$id"
      ;;
  esac
done

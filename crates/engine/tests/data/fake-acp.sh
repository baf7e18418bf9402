#!/bin/bash
# A fake Agent Client Protocol agent for crates/engine/tests/acp.rs: answers
# planwright's requests (ids 1, 2, 3; 4 sets the model) and plays the session named by
# $1 in the workspace it starts in; $2 is a path outside the workspace.
mode=$1 outside=$2
say() { printf '%s\n' "$1"; }
update() { say "{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"s1\",\"update\":$1}}"; }
ask() { # id kind path: a permission request, then the answer read back
  say "{\"jsonrpc\":\"2.0\",\"id\":\"$1\",\"method\":\"session/request_permission\",\"params\":{\"sessionId\":\"s1\",\"toolCall\":{\"toolCallId\":\"$1\",\"title\":\"$2 $3\",\"kind\":\"$2\",\"locations\":[{\"path\":\"$3\"}]},\"options\":[{\"optionId\":\"ok\",\"name\":\"Allow\",\"kind\":\"allow_once\"},{\"optionId\":\"no\",\"name\":\"Reject\",\"kind\":\"reject_once\"}]}}"
  read -r answer
  case $answer in *'"optionId":"ok"'*) return 0 ;; *) return 1 ;; esac
}
ask_always() { # id path: an edit request offering only allow_always
  say "{\"jsonrpc\":\"2.0\",\"id\":\"$1\",\"method\":\"session/request_permission\",\"params\":{\"sessionId\":\"s1\",\"toolCall\":{\"toolCallId\":\"$1\",\"title\":\"Write\",\"kind\":\"edit\",\"locations\":[{\"path\":\"$2\"}]},\"options\":[{\"optionId\":\"ever\",\"name\":\"Always\",\"kind\":\"allow_always\"},{\"optionId\":\"no\",\"name\":\"Reject\",\"kind\":\"reject_once\"}]}}"
  read -r answer
  printf '%s\n' "$answer" > always-answer.json
  case $answer in *'"optionId":"ever"'*) return 0 ;; *) return 1 ;; esac
}
end_turn() { say '{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","usage":{"inputTokens":120,"outputTokens":30,"cachedReadTokens":20,"cachedWriteTokens":5,"totalTokens":150}}}'; }

read -r _initialize
if [ "$mode" = malformed ]; then
  say 'this is not json'
  say '[1,2,3]'
  say '{"jsonrpc":"2.0"}'
fi
say '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{}}}'
read -r _new
if [ "$mode" = models ]; then
  say '{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1","models":{"currentModelId":"auto","availableModels":[{"modelId":"auto","name":"Auto"},{"modelId":"fast-1","name":"Fast"},{"modelId":"slow-2","name":"Slow"}]}}}'
  read -r set_model
  printf '%s\n' "$set_model" > set-model.json
  say '{"jsonrpc":"2.0","id":4,"result":{}}'
else
  say '{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s1"}}'
fi
read -r prompt
[ "$mode" = models ] && printf '%s\n' "$prompt" > prompt.json
case $prompt in *'"method":"session/prompt"'*) ;; *) exit 3 ;; esac
case $mode in
edit)
  printf '%s\n' "$_initialize" > initialize.json
  update '{"sessionUpdate":"plan","entries":[{"content":"write hello.txt","priority":"high","status":"pending"}]}'
  update '{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Write hello.txt","kind":"edit","status":"pending"}'
  ask c1 edit "$PWD/hello.txt" && echo hello > hello.txt
  update '{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed"}'
  update '{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"wrote "}}'
  update '{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello.txt"}}'
  end_turn ;;
chatty) # more updates than planwright shows, with escapes and long titles
  long=$(printf 'x%.0s' $(seq 400))
  for n in $(seq 510); do
    update "{\"sessionUpdate\":\"tool_call\",\"toolCallId\":\"c$n\",\"title\":\"\\u001b[31mRead\\u001b[0m\\tf$n\\u202e $long\",\"kind\":\"read\",\"status\":\"pending\"}"
  done
  end_turn ;;
models)
  say '{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","_meta":{"quota":{"token_count":{"input_tokens":50,"output_tokens":9},"model_usage":[{"model":"slow-2","token_count":{"input_tokens":40,"output_tokens":8}},{"model":"fast-1","token_count":{"input_tokens":10,"output_tokens":1}}]}}}}' ;;
deny)
  ask c1 edit "$outside" && echo planted > "$outside"
  ask c2 execute "$PWD/run.sh" && echo ran > ran.txt
  end_turn ;;
gemini-quota) # Gemini CLI 0.61's figures: no usage, its quota counts per model
  say '{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","_meta":{"quota":{"token_count":{"input_tokens":1000,"output_tokens":100},"model_usage":[{"model":"gemini-2.5-pro","token_count":{"input_tokens":1000,"output_tokens":100}}]}}}}' ;;
claude) # claude-agent-acp 0.23.1's figures: input apart from the cache, cost in usage_update
  update '{"sessionUpdate":"usage_update","used":3000,"size":200000,"cost":{"amount":0.004,"currency":"USD"}}'
  update '{"sessionUpdate":"usage_update","used":6600,"size":200000,"cost":{"amount":0.01425,"currency":"USD"}}'
  say '{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","usage":{"inputTokens":1390,"outputTokens":110,"cachedReadTokens":3100,"cachedWriteTokens":2000,"totalTokens":6600}}}' ;;
flood) # 40 MB of lines that are not the protocol, then 64 MiB with no newline
  line=$(head -c 999 /dev/zero | tr '\0' j)
  yes "$line" | head -n 40000
  head -c 67108864 /dev/zero | tr '\0' x
  printf '\n'
  end_turn ;;
long) # one line past a small line limit, then the turn's end
  head -c 5000 /dev/zero | tr '\0' y
  printf '\n'
  end_turn ;;
always)
  ask_always c1 "$PWD/hello.txt" && echo hello > hello.txt
  end_turn ;;
error)
  say '{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Internal error","data":{"details":"429 Too Many Requests: rate limit exceeded, retry in 30s"}}}' ;;
refusal)
  say '{"jsonrpc":"2.0","id":3,"result":{"stopReason":"refusal"}}' ;;
hang)
  : > turn-started
  while read -r line; do
    case $line in *'"method":"session/cancel"'*)
      echo "$line" > cancelled.json
      say '{"jsonrpc":"2.0","id":3,"result":{"stopReason":"cancelled"}}' ;;
    esac
  done ;;
deaf) # a turn that ignores session/cancel
  : > turn-started
  while read -r line; do :; done ;;
malformed)
  say '{"jsonrpc":"2.0","id":"f1","method":"fs/read_text_file","params":{"sessionId":"s1","path":"/etc/hostname"}}'
  read -r refusal
  echo "$refusal" > fs-answer.json
  end_turn ;;
esac
# An agent stays until its client is done with it.
cat > /dev/null

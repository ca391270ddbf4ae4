#!/bin/sh
# A stand-in for kubectl in the kubectl plugin's test: it answers the three calls the plugin
# makes from a running extender on 127.0.0.1:$FAKE_EXTENDER_PORT, as the real ones would reach it.
#   port-forward svc/NAME :PORT   prints kubectl's "Forwarding from" line naming the extender's
#                                 port, then waits to be killed (as kubectl does)
#   get --raw PATH                GET through the service proxy: PATH without its proxy prefix
#   create --raw PATH -f FILE     POST of FILE, the same way
#   get services ... -l ...       the chart's release found by its Service's labels: the lines of
#                                 $FAKE_SERVICES ("NAMESPACE NAME PORT"; default one release)
#   config view --minify ...      the context's namespace: $FAKE_CONTEXT_NAMESPACE (default none)
# Every call is appended to $FAKE_KUBECTL_LOG, so the test can check what the plugin asked for.
set -eu
printf '%s\n' "$*" >>"$FAKE_KUBECTL_LOG"  # printf: dash's echo would expand the \n of a jsonpath
while [ $# -gt 0 ]; do
  case $1 in
    --context | -n) shift 2 ;;
    *) break ;;
  esac
done
case $1 in
  config)
    printf '%s' "${FAKE_CONTEXT_NAMESPACE-}"
    exit 0
    ;;
  port-forward)
    echo "Forwarding from 127.0.0.1:$FAKE_EXTENDER_PORT -> 8888"
    echo "Forwarding from [::1]:$FAKE_EXTENDER_PORT -> 8888"
    exec sleep 600
    ;;
  get)
    if [ "$2" = services ]; then
      printf '%s\n' "${FAKE_SERVICES-gpu-system gte-gpu-topology-extender 8888}"
      exit 0
    fi
    ;;
esac
case $1 in
  get | create)
    verb=$1
    raw=$3
    case $raw in
      /api/v1/namespaces/*/services/*/proxy/*) path=/${raw#*/proxy/} ;;
      *) echo "fake kubectl: not a service proxy path: $raw" >&2; exit 1 ;;
    esac
    url="http://127.0.0.1:$FAKE_EXTENDER_PORT$path"
    if [ "$verb" = create ]; then
      out=$(curl -sS -w '\n%{http_code}' --data-binary "@$5" "$url")
    else
      out=$(curl -sS -w '\n%{http_code}' "$url")
    fi
    code=$(printf '%s' "$out" | tail -n 1)
    text=$(printf '%s' "$out" | sed '$d')
    if [ "$code" != 200 ]; then
      # As kubectl reports a proxied error: its status class only, not the body, exit 1.
      echo "Error from server (HTTP $code): the server rejected our request for an unknown reason" >&2
      exit 1
    fi
    printf '%s\n' "$text"
    ;;
  *) echo "fake kubectl: unexpected call: $*" >&2; exit 1 ;;
esac

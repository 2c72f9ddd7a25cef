#!/bin/sh
# Stands in for wsl.exe where there is no WSL (tests on Linux, via LIDGUARD_WSL_EXE): the
# "distro" is this machine with HOME=$FAKE_WSL_HOME, and C:\ maps to /mnt/c as in WSL.
# Only what lidguard runs is understood: --list --quiet, and [--distribution NAME] --exec ARGS.
set -e
if [ "$1" = "--list" ]; then
  # wsl.exe answers in UTF-16LE (microsoft/WSL#4607): "Ubuntu\r\nDebian\r\n"
  printf 'U\000b\000u\000n\000t\000u\000\r\000\n\000D\000e\000b\000i\000a\000n\000\r\000\n\000'
  exit 0
fi
if [ "$1" = "--distribution" ]; then
  [ "$2" = "Ubuntu" ] || [ "$2" = "Debian" ] || { echo "There is no distribution with the supplied name." >&2; exit 1; }
  shift 2
fi
[ "$1" = "--exec" ] || { echo "fake wsl: expected --exec, got $1" >&2; exit 2; }
shift
if [ "$1" = "wslpath" ]; then
  # wslpath -a -u 'C:\dir\file.exe' -> /mnt/c/dir/file.exe
  p=$4
  case $p in /*) printf '%s\n' "$p"; exit 0 ;; esac
  drive=$(printf '%s' "$p" | cut -c1 | tr 'A-Z' 'a-z')
  rest=$(printf '%s' "$p" | cut -c3- | tr '\\' '/')
  printf '/mnt/%s%s\n' "$drive" "$rest"
  exit 0
fi
# wsl.exe reads its command line by rules of its own: an argument with a double quote or a
# line break would not arrive as it was sent, so lidguard must never pass one (its scripts go on
# stdin). The stand-in refuses them, so a regression fails the tests instead of passing here.
nl='
'
for arg in "$@"; do
  case $arg in
    *\"*|*"$nl"*) echo "fake wsl: an argument wsl.exe would not pass on as it is: $arg" >&2; exit 2 ;;
  esac
done
HOME=$FAKE_WSL_HOME exec "$@"

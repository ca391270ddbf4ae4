# The Debian archive this machine's apt already uses, read from its apt sources (one-line
# sources.list or deb822 *.sources), so that no mirror host is ever written into the repository.
# Sourced by scripts/install-deps.sh and scripts/build-image.sh; prints to stdout, fails with a
# message on stderr.

# URIs of the apt sources whose suite matches the extended regular expression $1, in file order
# (deb822 stanzas and "deb" lines alike).
apt_source_uris() {
  local suite_re=$1 files=()
  [ -f /etc/apt/sources.list ] && files+=(/etc/apt/sources.list)
  compgen -G '/etc/apt/sources.list.d/*.list' >/dev/null && files+=(/etc/apt/sources.list.d/*.list)
  compgen -G '/etc/apt/sources.list.d/*.sources' >/dev/null && files+=(/etc/apt/sources.list.d/*.sources)
  [ "${#files[@]}" -gt 0 ] || return 0
  awk -v re="$suite_re" '
    function flush(   i, j) {
      for (i = 1; i <= nuris; i++) for (j = 1; j <= nsuites; j++) if (suites[j] ~ re) { print uris[i]; break }
      nuris = 0; nsuites = 0
    }
    FNR == 1 { flush() }
    /^[[:space:]]*$/ { flush(); next }
    /^URIs:/ { for (i = 2; i <= NF; i++) uris[++nuris] = $i; next }
    /^Suites:/ { for (i = 2; i <= NF; i++) suites[++nsuites] = $i; next }
    $1 == "deb" {
      n = 2
      if ($2 ~ /^\[/) { while (n <= NF && $n !~ /\]$/) n++; n++ }
      if ($(n + 1) ~ re) print $n
    }
    END { flush() }' "${files[@]}"
}

# The main Debian archive (the first source of a suite that is not -security), without a trailing /.
debian_mirror() {
  local uri
  uri=$(apt_source_uris '^[a-z]+(-updates|-backports)?$' | grep -v security | head -n1)
  [ -n "$uri" ] || { printf 'no Debian mirror found in apt sources\n' >&2; return 1; }
  printf '%s\n' "${uri%/}"
}

# The security archive (the source of a *-security suite); empty when the machine has none.
debian_security_mirror() {
  local uri
  uri=$(apt_source_uris '-security$' | head -n1)
  [ -z "$uri" ] || printf '%s\n' "${uri%/}"
}

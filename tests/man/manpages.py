#!/usr/bin/env python3
"""Manual pages against the public headers.

  manpages.py coverage SRCDIR
      Every function declared in libkvmstat/include/kvmstat/*.h is reachable
      by `man FUNCTION`: it has its own page, or libkvmstat/man/MLINKS links
      it to a family page whose NAME or SYNOPSIS documents it.  Every link
      names a declared function and an existing page.
  manpages.py installed SRCDIR MANDIR
      The same, on an installed tree: MANDIR/man3/FUNCTION.3 resolves to a
      page documenting FUNCTION.
  manpages.py links SRCDIR
      Print the link list (link target), for meson and scripts.
  manpages.py options SRCDIR PAGE PROGRAM
      Every long option and command `PROGRAM --help` prints appears in its
      section 1 page (as Fl Fl or .It Cm).
"""
import os
import re
import subprocess
import sys


def header_functions(srcdir):
    """Names of the functions the public headers declare."""
    names = {}
    incdir = os.path.join(srcdir, 'libkvmstat', 'include', 'kvmstat')
    for h in sorted(os.listdir(incdir)):
        if not h.endswith('.h'):
            continue
        text = open(os.path.join(incdir, h)).read()
        text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
        text = re.sub(r'//[^\n]*', ' ', text)
        text = '\n'.join(l for l in text.split('\n') if not l.lstrip().startswith('#'))
        text = text.replace('extern "C" {', ' ')
        # Drop struct/enum bodies (innermost first): their members are not
        # functions, even function-pointer ones.
        while True:
            t2 = re.sub(r'\{[^{}]*\}', ' ', text)
            if t2 == text:
                break
            text = t2
        for stmt in text.split(';'):
            stmt = ' '.join(stmt.replace('}', ' ').split())
            if '(' not in stmt or stmt.startswith('typedef'):
                continue
            m = re.match(r'[^(]*?([A-Za-z_]\w*)\s*\($', stmt[:stmt.index('(') + 1])
            if m is None:
                raise SystemExit('%s: cannot parse declaration: %s' % (h, stmt))
            names[m.group(1)] = h
    if len(names) < 50:
        raise SystemExit('only %d functions found in %s: parser broken?' % (len(names), incdir))
    return names


def read_links(srcdir):
    """MLINKS: 'page.3 link.3' per line, '#' comments."""
    links = {}
    path = os.path.join(srcdir, 'libkvmstat', 'man', 'MLINKS')
    for n, line in enumerate(open(path), 1):
        line = line.split('#', 1)[0].split()
        if not line:
            continue
        if len(line) != 2:
            raise SystemExit('%s:%d: expected "page.3 link.3"' % (path, n))
        target, link = line
        if link in links:
            raise SystemExit('%s:%d: %s linked twice' % (path, n, link))
        links[link] = target
    return links


def documents(page_text, fn):
    """The page names fn in NAME (.Nm) or declares it in SYNOPSIS (.Fn/.Fo)."""
    pat = r'^\.(Nm|Fn|Fo)\s+"?%s"?(\s|,|$)' % re.escape(fn)
    return re.search(pat, page_text, flags=re.M) is not None


def check(srcdir, resolve):
    """resolve(fn) -> (page path or None, how).  Returns the failures."""
    bad = []
    for fn, h in sorted(header_functions(srcdir).items()):
        page, how = resolve(fn)
        if page is None:
            bad.append('%s (%s): no manual page: %s' % (fn, h, how))
        elif not documents(open(page).read(), fn):
            bad.append('%s (%s): %s does not document it (no .Nm/.Fn/.Fo %s)'
                       % (fn, h, page, fn))
    return bad


def main(argv):
    if len(argv) < 3:
        raise SystemExit(__doc__)
    mode, srcdir = argv[1], argv[2]
    mandir = os.path.join(srcdir, 'libkvmstat', 'man')
    if mode == 'links':
        for link, target in sorted(read_links(srcdir).items()):
            print(link, target)
        return 0
    if mode == 'coverage':
        links = read_links(srcdir)
        funcs = header_functions(srcdir)
        bad = []
        for link, target in sorted(links.items()):
            if not os.path.exists(os.path.join(mandir, target)):
                bad.append('MLINKS: %s -> %s: no such page' % (link, target))
            if not link.endswith('.3') or link[:-2] not in funcs:
                bad.append('MLINKS: %s names no function of the public headers' % link)

        def resolve(fn):
            own = os.path.join(mandir, fn + '.3')
            if os.path.exists(own):
                return own, ''
            if fn + '.3' in links:
                return os.path.join(mandir, links[fn + '.3']), ''
            return None, 'add "PAGE.3 %s.3" to libkvmstat/man/MLINKS' % fn
        bad += check(srcdir, resolve)
        n = len(funcs)
    elif mode == 'installed':
        man3 = os.path.join(argv[3], 'man3')

        def resolve(fn):
            p = os.path.join(man3, fn + '.3')
            if os.path.exists(p):
                return os.path.realpath(p), ''
            return None, '%s missing or dangling' % p
        bad = check(srcdir, resolve)
        n = len(header_functions(srcdir))
    elif mode == 'options':
        page, program = argv[3], argv[4]
        text = open(page).read()
        r = subprocess.run([program, '--help'], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True)
        help_ = r.stdout
        if r.returncode != 0 or 'usage' not in help_:
            raise SystemExit('%s --help: exit %d, no usage:\n%s' % (program, r.returncode, help_))
        bad = []
        opts = set(re.findall(r'(?<![\w-])--([a-z][\w-]*)', help_))
        for o in sorted(opts):
            if not re.search(r'^\.(?:.*\s)?Fl Fl %s(\s|$)' % re.escape(o), text, flags=re.M):
                bad.append('%s: --%s (in --help) is not documented' % (page, o))
        # Commands: "  name   help" lines under "commands:".
        cmds = []
        if 'commands:' in help_:
            for line in help_.split('commands:', 1)[1].split('\n'):
                m = re.match(r'  ([a-z][\w-]*)\s', line)
                if m:
                    cmds.append(m.group(1))
        for c in cmds:
            if not re.search(r'^\.It Cm %s(\s|$)' % re.escape(c), text, flags=re.M):
                bad.append('%s: command %s (in --help) has no .It Cm entry' % (page, c))
        n = len(opts) + len(cmds)
    else:
        raise SystemExit(__doc__)
    for b in bad:
        print('FAIL:', b)
    print('%s: %d checked, %d failures' % (mode, n, len(bad)))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))

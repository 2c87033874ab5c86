"""Print where modules go under the prefix given, so that this python3
finds them there with no PYTHONPATH: the directory of its own sys.path that
lies under <prefix>/lib and is a dist- or site-packages (Debian's python3:
/usr/local/lib/python3.X/dist-packages for /usr/local,
/usr/lib/python3/dist-packages for /usr).  When it looks nowhere under that
prefix, the standard <prefix>/lib/python3.X/site-packages (PYTHONPATH then
names it)."""
import os
import sys
import sysconfig

prefix = os.path.normpath(sys.argv[1])
lib = os.path.join(prefix, 'lib') + os.sep
for d in sys.path:
    d = os.path.normpath(d) if d else ''
    if d.startswith(lib) and os.path.basename(d) in ('dist-packages', 'site-packages'):
        print(d)
        break
else:
    print(sysconfig.get_path('purelib', 'posix_prefix',
                             vars={'base': prefix, 'platbase': prefix}))

#!/usr/bin/env python3
"""Print one member of a kernel structure, found by name.

    member.py KERNEL CORE TYPE MEMBER ADDRESS|SYMBOL
    member.py vmlinux vmcore kmem_cache size 0xffff888003c41000
"""
import sys

import _path  # noqa: F401
import kvmstat


def main(argv):
    if len(argv) != 6:
        print(__doc__.strip().split('\n')[2].strip(), file=sys.stderr)
        return 2
    kernel, core, type_, member, where = argv[1:]
    try:
        with kvmstat.open(core=core, kernel=kernel) as k:
            try:
                addr = int(where, 0)
            except ValueError:
                addr = k.symbol(where)
            obj = k.read_struct(type_, addr)
            ti = k.member(type_, member)
            value = obj[member]
            name = obj._type                     # as resolved: 'struct kmem_cache'
            if ti.kind == 'pointer':
                line = '%s.%s = 0x%x' % (name, member, value)
                if 'char *' in ti.type_name and value:
                    line += ' "%s"' % k.read_string(value, 256)
            elif isinstance(value, int):
                line = '%s.%s = %d' % (name, member, value)
            else:
                print('member: %s.%s is a %s, not a number' % (name, member, ti.type_name),
                      file=sys.stderr)
                return 1
            print(line)
    except kvmstat.Error as e:
        print('member: %s' % e, file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Minimal QMP client: send one command to a QEMU QMP unix socket.

    qmp.py SOCKET COMMAND ['{"json": "arguments"}'] [--timeout SEC]

Prints the "return" value as JSON and exits 0, or prints the error and exits 1.
Asynchronous events that arrive meanwhile are skipped (printed to stderr with -v).
"""
import json
import socket
import sys
import time


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--') and a != '-v']
    verbose = '-v' in sys.argv
    timeout = 300.0
    if '--timeout' in sys.argv:
        timeout = float(sys.argv[sys.argv.index('--timeout') + 1])
        args.remove(sys.argv[sys.argv.index('--timeout') + 1])
    if len(args) < 2:
        sys.exit(__doc__)
    path, cmd = args[0], args[1]
    arguments = json.loads(args[2]) if len(args) > 2 else None

    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    deadline = time.monotonic() + 10
    while True:
        try:
            s.connect(path)
            break
        except OSError as e:
            if time.monotonic() > deadline:
                sys.exit(f'qmp: cannot connect to {path}: {e}')
            time.sleep(0.1)
    s.settimeout(timeout)
    f = s.makefile('rwb', buffering=0)

    def recv():
        while True:
            line = f.readline()
            if not line:
                raise SystemExit('qmp: connection closed')
            msg = json.loads(line)
            if 'event' in msg:
                if verbose:
                    print('qmp event:', line.decode().strip(), file=sys.stderr)
                continue
            return msg

    def send(command, arguments=None):
        msg = {'execute': command}
        if arguments is not None:
            msg['arguments'] = arguments
        f.write(json.dumps(msg).encode() + b'\n')
        return recv()

    greeting = recv()
    if 'QMP' not in greeting:
        sys.exit(f'qmp: unexpected greeting {greeting}')
    r = send('qmp_capabilities')
    if 'error' in r:
        sys.exit(f'qmp: qmp_capabilities: {r["error"]}')
    try:
        r = send(cmd, arguments)
    except SystemExit:
        if cmd == 'quit':          # QEMU may close before answering
            return
        raise
    except socket.timeout:
        sys.exit(f'qmp: {cmd}: no answer in {timeout} s')
    if 'error' in r:
        print(f'qmp: {cmd}: {r["error"].get("class")}: {r["error"].get("desc")}', file=sys.stderr)
        sys.exit(1)
    print(json.dumps(r.get('return')))


if __name__ == '__main__':
    main()

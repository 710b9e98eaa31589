#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# TAP test: the YAML specs of the two netlink families
# (Documentation/netlink/specs/) against what they describe, so that the
# three cannot drift apart:
#
#  - the uapi headers (uapi/linux/): the family's name and version, the
#    consts against the #defines, the enums, the attribute and command
#    enums (names and values, implicit increments included), the
#    multicast group defines, and the kernel-doc of the enums (the type
#    and range each attribute's doc gives, the attributes each command's
#    doc names);
#  - the kernel (kmod/*/netlink.c): the family struct, the nla_policy
#    tables (types, NLA_POLICY_MIN/MAX/RANGE/FULL_RANGE, .len, nested
#    policies, NLA_REJECT for what is output only), the ops array (do,
#    dump, GENL_ADMIN_PERM, validation flags), the multicast groups and
#    their flags, and the attributes each command's handlers read and the
#    messages they put together (nla_put_*() calls, followed through the
#    file's own functions).
#
# The C is read with regular expressions that know the kernel's coding
# style (a function's opening brace at the start of a line, designated
# initializers); what they cannot read is a failure, not a pass.
#
#   selftests/host/spec_check.py [SOURCE_TREE]

import os
import re
import sys

try:
    import yaml
except ImportError:
    print('Bail out! python3-yaml is missing (selftests/deps.sh installs it)')
    sys.exit(1)

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                       os.path.join(os.path.dirname(__file__), '..', '..'))

FAMILIES = [
    ('Documentation/netlink/specs/rmbd_client.yaml', 'kmod/client/netlink.c'),
    ('Documentation/netlink/specs/rmbd_target.yaml', 'kmod/target/netlink.c'),
]

# The spec's attribute types and the policy types that validate them.
NLA_OF_TYPE = {
    'u8': {'NLA_U8'}, 'u16': {'NLA_U16'}, 'u32': {'NLA_U32'},
    'u64': {'NLA_U64'}, 's8': {'NLA_S8'}, 's16': {'NLA_S16'},
    's32': {'NLA_S32'}, 's64': {'NLA_S64'},
    'string': {'NLA_NUL_STRING', 'NLA_STRING'}, 'binary': {'NLA_BINARY'},
    'flag': {'NLA_FLAG'}, 'nest': {'NLA_NESTED', 'NLA_NESTED_ARRAY'},
    'pad': {'NLA_REJECT'},
}
INT_TYPES = {'u8', 'u16', 'u32', 'u64', 's8', 's16', 's32', 's64'}

# The attribute type that each nla_put_*() and nla_get_*() stands for.
PUT_TYPE = {
    'nla_put_u8': 'u8', 'nla_put_u16': 'u16', 'nla_put_u32': 'u32',
    'nla_put_u64_64bit': 'u64', 'nla_put_s8': 's8', 'nla_put_s16': 's16',
    'nla_put_s32': 's32', 'nla_put_s64': 's64', 'nla_put_string': 'string',
    'nla_put_flag': 'flag', 'nla_put': 'binary', 'nla_nest_start': 'nest',
    'nla_nest_start_noflag': 'nest',
}
GET_TYPE = {
    'nla_get_u8': 'u8', 'nla_get_u16': 'u16', 'nla_get_u32': 'u32',
    'nla_get_u64': 'u64', 'nla_get_s8': 's8', 'nla_get_s16': 's16',
    'nla_get_s32': 's32', 'nla_get_s64': 's64', 'nla_get_flag': 'flag',
}

# Command flags and multicast group flags: the spec's name, the kernel's.
OP_FLAGS = {'admin-perm': 'GENL_ADMIN_PERM',
            'uns-admin-perm': 'GENL_UNS_ADMIN_PERM'}
MCGRP_FLAGS = {'admin-perm': 'GENL_MCAST_CAP_NET_ADMIN'}
VALIDATE_FLAGS = {'strict': 'GENL_DONT_VALIDATE_STRICT',
                  'dump': 'GENL_DONT_VALIDATE_DUMP',
                  'dump-strict': 'GENL_DONT_VALIDATE_DUMP_STRICT'}

# The keys of genetlink-legacy specs, per kind of object: a key the
# schema does not know (a typo, "flag" for "flags") would be ignored.
SPEC_KEYS = {
    'top': {'name', 'doc', 'protocol', 'uapi-header', 'c-family-name',
            'c-version-name', 'max-by-define', 'cmd-max-name', 'cmd-cnt-name',
            'version', 'kernel-policy', 'kernel-family', 'definitions',
            'attribute-sets', 'operations', 'mcast-groups'},
    'definition': {'name', 'header', 'type', 'doc', 'name-prefix',
                   'enum-name', 'enum-cnt-name', 'value', 'value-start',
                   'entries', 'render-max', 'members'},
    'entry': {'name', 'value', 'doc'},
    'attribute-set': {'name', 'enum-name', 'name-prefix', 'attr-cnt-name',
                      'attr-max-name', 'subset-of', 'attributes', 'doc'},
    'attribute': {'name', 'type', 'doc', 'value', 'type-value', 'byte-order',
                  'multi-attr', 'nested-attributes', 'enum', 'enum-as-flags',
                  'checks', 'sub-type', 'display-hint', 'struct',
                  'name-prefix'},
    'checks': {'min', 'max', 'min-len', 'max-len', 'exact-len',
               'unterminated-ok'},
    'operations': {'name-prefix', 'enum-name', 'async-prefix', 'async-enum',
                   'list', 'fixed-header', 'enum-model'},
    'operation': {'name', 'doc', 'value', 'attribute-set', 'flags',
                  'dont-validate', 'fixed-header', 'do', 'dump', 'notify',
                  'event', 'mcgrp'},
    'do': {'request', 'reply', 'pre', 'post'},
    'message': {'attributes', 'value'},
    'mcast-groups': {'list'},
    'mcast-group': {'name', 'c-define-name', 'flags'},
}

# The fill functions of both families take the event of a notification
# as "event", 0 for a reply or a dump: a put behind "event &&" is in
# notifications only, one behind "!event &&" never in them.
EVENT_GUARD = 'event'


# ---------------------------------------------------------------- TAP

class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def result(self, ok, desc, why=()):
        self.n += 1
        if ok:
            print(f'ok {self.n} - {desc}')
            return
        self.failed += 1
        print(f'not ok {self.n} - {desc}')
        for line in why:
            print(f'#   {line}')

    def check(self, desc, fn, *args):
        """Run fn(*args), which returns a list of differences."""
        try:
            why = fn(*args)
        except CheckError as e:
            why = [str(e)]
        except (KeyError, IndexError, TypeError, ValueError,
                AttributeError) as e:
            # A spec or a file this script cannot read fails the check.
            why = [f'cannot check: {e!r}']
        self.result(not why, desc, why)


class CheckError(Exception):
    pass


# ---------------------------------------------------------------- C

def read(rel):
    with open(os.path.join(ROOT, rel), encoding='utf-8') as f:
        return f.read()


def strip_comments(text):
    """C without its comments; string literals kept, lines kept."""
    def repl(m):
        s = m.group(0)
        if s.startswith('"'):
            return s
        return '\n' * s.count('\n') if s.startswith('/*') else ''
    return re.sub(r'"(?:\\.|[^"\\\n])*"|//[^\n]*|/\*.*?\*/', repl, text,
                  flags=re.S)


def c_upper(name):
    return name.upper().replace('-', '_')


def matching(text, i, open_c='(', close_c=')'):
    """Index of the bracket that closes the one at text[i]."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] == open_c:
            depth += 1
        elif text[j] == close_c:
            depth -= 1
            if depth == 0:
                return j
    raise CheckError(f'no closing {close_c!r} for the one at {i}')


def split_top(text, sep=','):
    """Split at separators outside brackets."""
    parts, depth, cur = [], 0, ''
    for ch in text:
        if ch in '([{':
            depth += 1
        elif ch in ')]}':
            depth -= 1
        if ch == sep and depth == 0:
            parts.append(cur)
            cur = ''
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return [p.strip() for p in parts]


class Symbols:
    """#defines and enum constants of some C files, and their values."""

    def __init__(self):
        self.defines = {}       # name -> expression text
        self.enums = {}         # enum name -> [(const, value)]
        self.consts = {}        # enum const -> value
        self.docs = {}          # enum name -> {const: doc}

    def add_header(self, rel):
        raw = read(rel)
        self.add_docs(raw)
        self.add_c(strip_comments(raw))

    def add_c(self, text):
        for m in re.finditer(r'^[ \t]*#[ \t]*define[ \t]+(\w+)\b(?!\()'
                             r'[ \t]*(.*)$', text, re.M):
            self.defines.setdefault(m.group(1), m.group(2).strip())
        for m in re.finditer(r'\benum\s+(\w+)?\s*\{(.*?)\}\s*;', text, re.S):
            members, nxt = [], 0
            for item in split_top(m.group(2)):
                mm = re.fullmatch(r'(\w+)\s*(?:=\s*(.+))?', item, re.S)
                if not mm:
                    raise CheckError(f'cannot read enum item {item!r}')
                if mm.group(2) is not None:
                    nxt = self.value(mm.group(2))
                members.append((mm.group(1), nxt))
                self.consts[mm.group(1)] = nxt
                nxt += 1
            if m.group(1):
                self.enums[m.group(1)] = members

    def add_docs(self, raw):
        """The kernel-doc comment of each enum: @CONST: text."""
        for m in re.finditer(r'/\*\*(.*?)\*/\s*enum\s+(\w+)\s*\{', raw, re.S):
            lines = [re.sub(r'^\s*\*?[ \t]?', '', ln)
                     for ln in m.group(1).split('\n')]
            items, cur = {}, None
            for ln in lines:
                im = re.match(r'@(\w+):\s*(.*)', ln)
                if im:
                    cur = im.group(1)
                    items[cur] = im.group(2)
                elif cur:
                    items[cur] += ' ' + ln.strip()
            self.docs[m.group(2)] = {k: ' '.join(v.split())
                                     for k, v in items.items()}

    def value(self, expr, depth=0):
        """The value of a constant C expression of these symbols."""
        if depth > 20:
            raise CheckError(f'{expr!r} does not resolve')
        expr = expr.strip()
        sm = re.fullmatch(r'"((?:\\.|[^"\\])*)"', expr)
        if sm:
            return sm.group(1)
        if expr in self.defines:
            return self.value(self.defines[expr], depth + 1)

        def ident(m):
            name = m.group(0)
            if name in self.consts:
                return str(self.consts[name])
            if name in self.defines:
                v = self.value(self.defines[name], depth + 1)
                if isinstance(v, str):
                    raise CheckError(f'{name} is a string in {expr!r}')
                return f'({v})'
            raise CheckError(f'{name} in {expr!r} is not a known constant')

        text = re.sub(r'\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\b',
                      lambda m: m.group(1), expr)
        text = re.sub(r'\b[A-Za-z_]\w*\b', ident, text)
        if not re.fullmatch(r'[\s0-9a-fA-FxX()+\-*/%<>|&~^]*', text):
            raise CheckError(f'cannot evaluate {expr!r}')
        text = text.replace('/', '//')
        try:
            return int(eval(text, {'__builtins__': {}}))  # digits only
        except Exception as e:  # noqa: BLE001 - reported as a failure
            raise CheckError(f'cannot evaluate {expr!r}: {e}') from e

    def try_value(self, expr):
        try:
            return self.value(expr)
        except CheckError:
            return None


class Kernel:
    """What a family's netlink.c says: policies, ops, groups, functions."""

    def __init__(self, rel, syms):
        self.syms = syms
        self.text = strip_comments(read(rel))
        self.syms.add_c(self.text)
        self.ranges = self._ranges()
        self.policies = self._policies()
        self.functions = self._functions()
        self.family = self._family()
        self.ops = self._ops()
        self.mcgrps = self._mcgrps()

    def _array(self, ctype, name=None):
        """The initializer of an array of struct ctype, by name."""
        pat = (r'struct\s+' + ctype + r'\s+(' + (name or r'\w+') +
               r')\s*\[[^\]]*\]\s*(?:__\w+\s*)*=\s*\{')
        out = {}
        for m in re.finditer(pat, self.text):
            start = m.end() - 1
            out[m.group(1)] = self.text[start + 1:matching(self.text, start,
                                                           '{', '}')]
        return out

    @staticmethod
    def fields(init):
        """The designated fields of a struct initializer { .a = b, }."""
        out = {}
        for part in split_top(init.strip().strip('{}')):
            fm = re.fullmatch(r'\.(\w+)\s*=\s*(.+)', part, re.S)
            if fm:
                out[fm.group(1)] = ' '.join(fm.group(2).split())
        return out

    def _ranges(self):
        out = {}
        for m in re.finditer(r'struct\s+netlink_range_validation(?:_signed)?'
                             r'\s+(\w+)\s*=\s*(\{.*?\})\s*;', self.text, re.S):
            out[m.group(1)] = self.fields(m.group(2))
        return out

    def _policies(self):
        out = {}
        for m in re.finditer(r'struct\s+nla_policy\s+(\w+)\s*\[([^\]]*)\]\s*'
                             r'(?:__\w+\s*)*=\s*\{', self.text):
            start = m.end() - 1
            body = self.text[start + 1:matching(self.text, start, '{', '}')]
            entries = {}
            for part in split_top(body):
                em = re.fullmatch(r'\[\s*(\w+)\s*\]\s*=\s*(.+)', part, re.S)
                if not em:
                    raise CheckError(f'{m.group(1)}: cannot read {part!r}')
                entries[em.group(1)] = self.policy_entry(em.group(2))
            out[m.group(1)] = {'size': m.group(2).strip(), 'entries': entries}
        return out

    def policy_entry(self, text):
        """An nla_policy initializer as {type, limits, nested, array}."""
        text = ' '.join(text.split())
        syms = self.syms
        e = {'type': None, 'limits': {}, 'nested': None, 'array': False,
             'text': text}
        if text.startswith('{'):
            f = self.fields(text)
            e['type'] = f.get('type', 'NLA_UNSPEC')
            if 'len' in f:
                e['limits']['max-len'] = syms.value(f['len'])
            if set(f) - {'type', 'len'}:
                raise CheckError(f'fields {sorted(set(f) - {"type", "len"})}'
                                 f' of {text!r} not understood')
            return e
        mm = re.fullmatch(r'(NLA_POLICY_\w+)\s*\((.*)\)', text)
        if not mm:
            raise CheckError(f'cannot read policy {text!r}')
        macro, args = mm.group(1), split_top(mm.group(2))
        if macro in ('NLA_POLICY_MIN', 'NLA_POLICY_MAX'):
            e['type'] = args[0]
            e['limits'][macro[-3:].lower()] = syms.value(args[1])
        elif macro == 'NLA_POLICY_RANGE':
            e['type'] = args[0]
            e['limits'] = {'min': syms.value(args[1]),
                           'max': syms.value(args[2])}
        elif macro == 'NLA_POLICY_FULL_RANGE':
            e['type'] = args[0]
            r = self.ranges.get(args[1].lstrip('&').strip())
            if r is None:
                raise CheckError(f'no netlink_range_validation {args[1]}')
            e['limits'] = {k: syms.value(r[k]) for k in ('min', 'max')
                           if k in r}
        elif macro in ('NLA_POLICY_NESTED', 'NLA_POLICY_NESTED_ARRAY'):
            e['type'] = ('NLA_NESTED_ARRAY' if macro.endswith('ARRAY')
                         else 'NLA_NESTED')
            e['nested'] = args[-1]
            e['array'] = macro.endswith('ARRAY')
        elif macro in ('NLA_POLICY_MIN_LEN', 'NLA_POLICY_MAX_LEN',
                       'NLA_POLICY_EXACT_LEN'):
            e['type'] = 'NLA_BINARY'
            key = {'MIN': 'min-len', 'MAX': 'max-len',
                   'EXACT': 'exact-len'}[macro.split('_')[2]]
            e['limits'][key] = syms.value(args[0])
        else:
            raise CheckError(f'policy macro {macro} not understood')
        return e

    def _functions(self):
        """Function bodies: kernel style opens them at a line's start."""
        out = {}
        for m in re.finditer(r'^\{', self.text, re.M):
            head = self.text[:m.start()]
            cut = max(head.rfind(';'), head.rfind('}'))
            hm = re.search(r'(\w+)\s*\(', head[cut + 1:])
            if hm:
                end = matching(self.text, m.start(), '{', '}')
                out[hm.group(1)] = self.text[m.start():end + 1]
        return out

    def _family(self):
        m = re.search(r'struct\s+genl_family\s+\w+\s*(?:__\w+\s*)*=\s*\{',
                      self.text)
        if not m:
            raise CheckError('no struct genl_family initializer')
        start = m.end() - 1
        return self.fields(self.text[start:matching(self.text, start,
                                                    '{', '}') + 1])

    def _ops(self):
        name = self.family.get('ops') or self.family.get('small_ops')
        arrays = {**self._array('genl_ops'), **self._array('genl_small_ops')}
        if name not in arrays:
            raise CheckError(f'no ops array {name}')
        ops = {}
        for part in split_top(arrays[name]):
            f = self.fields(part)
            ops[self.syms.value(f['cmd'])] = f
        return ops

    def _mcgrps(self):
        name = self.family.get('mcgrps')
        if not name:
            return []
        arrays = self._array('genl_multicast_group', name)
        return [self.fields(p) for p in split_top(arrays[name])]

    # The file's calls, found in function bodies.

    def closure(self, names):
        """names and the functions of the file they reference, transitively."""
        seen, todo = set(), [n for n in names if n]
        while todo:
            f = todo.pop()
            if f in seen or f not in self.functions:
                continue
            seen.add(f)
            todo += re.findall(r'\b\w+\b', self.functions[f])
        return seen

    @staticmethod
    def calls(body, names_re):
        """(name, [args], start, end) of each call to a matching function."""
        out = []
        for m in re.finditer(r'\b(' + names_re + r')\s*\(', body):
            open_i = m.end() - 1
            end = matching(body, open_i)
            out.append((m.group(1), split_top(body[open_i + 1:end]),
                        m.start(), end + 1))
        return out

    @staticmethod
    def guard(body, pos):
        """'event', '!event' or None: the guard of a put at pos."""
        depth = 0
        for i in range(pos - 1, -1, -1):
            if body[i] == ')':
                depth += 1
            elif body[i] == '(':
                if depth == 0:
                    gm = re.match(r'\s*(!?)\s*' + EVENT_GUARD + r'\s*&&',
                                  body[i + 1:pos])
                    return (gm.group(1) + EVENT_GUARD) if gm else None
                depth -= 1
        return None

    PUT_RE = r'nla_put(?:_\w+)?|nla_nest_start(?:_noflag)?'

    def puts(self, funcs):
        """[(const, type, guard)] the functions put, and pad attributes."""
        out, pads = [], set()
        for f in funcs:
            body = self.functions[f]
            for name, args, start, _ in self.calls(body, self.PUT_RE):
                if name not in PUT_TYPE or len(args) < 2:
                    raise CheckError(f'{f}(): {name}() not understood')
                out.append((args[1], PUT_TYPE[name], self.guard(body, start)))
                if name == 'nla_put_u64_64bit' and len(args) == 4:
                    pads.add(args[3])
        return out, pads

    def gets(self):
        """{const: {types}} from nla_get_*(x[CONST])."""
        out = {}
        for name, args, _, _ in self.calls(self.text, r'nla_get_\w+'):
            am = re.fullmatch(r'[\w>.\-]*\[\s*(\w+)\s*\]', args[0]) \
                if args else None
            if am and name in GET_TYPE:
                out.setdefault(am.group(1), set()).add(GET_TYPE[name])
        return out

    def reads(self, funcs):
        """Constants the functions name outside their nla_put*() calls."""
        out = set()
        for f in funcs:
            body = self.functions[f]
            for _, _, start, end in reversed(self.calls(body, self.PUT_RE)):
                body = body[:start] + body[end:]
            out |= set(re.findall(r'\b[A-Z_][A-Z0-9_]+\b', body))
        return out

    def refuses(self, funcs, const):
        """Whether an if on x[const] in funcs returns an error."""
        for f in funcs:
            body = self.functions[f]
            for _, args, _, end in self.calls(body, r'if'):
                if not re.search(r'\[\s*' + const + r'\s*\]', args[0]):
                    continue
                then = body[end:].lstrip()
                if then.startswith('{'):
                    then = then[:matching(then, 0, '{', '}')]
                else:
                    then = then[:then.find(';') + 1]
                if re.search(r'\breturn\s+-E[A-Z]+\s*;', then):
                    return True
        return False

    def min_len_in_code(self, const):
        """The bound of an nla_len(x[CONST]) < MIN refusal, if any."""
        m = re.search(r'nla_len\s*\(\s*[\w>.\-]*\[\s*' + const +
                      r'\s*\]\s*\)\s*<\s*(\w+)', self.text)
        return self.syms.value(m.group(1)) if m else None


# ---------------------------------------------------------------- spec

class Spec:
    def __init__(self, rel):
        self.rel = rel
        with open(os.path.join(ROOT, rel), encoding='utf-8') as f:
            self.y = yaml.safe_load(f)
        self.name = self.y['name']
        self.sets = {s['name']: s for s in self.y['attribute-sets']}
        self.defs = {d['name']: d for d in self.y.get('definitions', [])}

    def base(self, set_name):
        """The full set a (subset) set takes its attributes from."""
        s = self.sets[set_name]
        return self.sets[s['subset-of']] if 'subset-of' in s else s

    def attr(self, set_name, name):
        for a in self.base(set_name)['attributes']:
            if a['name'] == name:
                return a
        raise CheckError(f'no attribute {name} in set {set_name}')

    def attrs(self, set_name):
        """(attr, full definition) of a set, in order."""
        s = self.sets[set_name]
        return [(a, self.attr(set_name, a['name'])) for a in s['attributes']]

    def const(self, set_name, attr_name):
        b = self.base(set_name)
        return c_upper(b['name-prefix'] + attr_name)

    def numbered(self, set_name):
        """{attr name: value}, implicit values counted as ynl counts them."""
        out, nxt = {}, 1
        for a in self.base(set_name)['attributes']:
            v = a.get('value', nxt)
            out[a['name']] = v
            nxt = v + 1
        return out

    def limit(self, v):
        """A check's value: an integer or the name of a const."""
        if isinstance(v, int):
            return v
        if v in self.defs and self.defs[v]['type'] == 'const':
            return self.defs[v]['value']
        raise CheckError(f'check value {v!r} is not a const of the spec')

    def checks(self, a):
        known = {'min', 'max', 'min-len', 'max-len', 'exact-len'}
        c = a.get('checks', {})
        if set(c) - known:
            raise CheckError(f'checks {sorted(set(c) - known)} not understood')
        return {k: self.limit(v) for k, v in c.items()}

    def enum_range(self, enum_name):
        d = self.defs[enum_name]
        start = d.get('value-start', 0)
        vals = [e.get('value', start + i) if isinstance(e, dict)
                else start + i for i, e in enumerate(d['entries'])]
        return min(vals), max(vals)

    def nested_sets(self, set_name, names):
        """The attributes found only inside the nests of names."""
        out, todo = set(), list(names)
        while todo:
            a = self.attr(set_name, todo.pop())
            inner = a.get('nested-attributes')
            if not inner or self.base(inner) is not self.base(set_name):
                continue
            for sub in self.sets[inner]['attributes']:
                if sub['name'] not in out:
                    out.add(sub['name'])
                    todo.append(sub['name'])
        return out


def norm_limits(limits, t):
    """Limits as compared: a minimum of 0 of an unsigned type is none."""
    out = dict(limits)
    if t in INT_TYPES and t.startswith('u') and out.get('min') == 0:
        del out['min']
    return out


def fmt(d):
    return '{' + ', '.join(f'{k}: {v}' for k, v in sorted(d.items())) + '}' \
        if d else 'none'


def diff_sets(what, spec, kernel, spec_name='spec', kernel_name='kernel'):
    why = []
    if spec - kernel:
        why.append(f'{what}: in the {spec_name}, not the {kernel_name}: '
                   f'{", ".join(sorted(spec - kernel))}')
    if kernel - spec:
        why.append(f'{what}: in the {kernel_name}, not the {spec_name}: '
                   f'{", ".join(sorted(kernel - spec))}')
    return why


# ---------------------------------------------------------------- checks

class FamilyCheck:
    def __init__(self, tap, spec_rel, kernel_rel):
        self.tap = tap
        self.spec = Spec(spec_rel)
        self.fam = self.spec.name
        self.syms = Symbols()
        hdr = 'uapi/' + self.spec.y['uapi-header']
        self.header = hdr
        # The family's own header first: its defines are the ones checked.
        self.syms.add_header(hdr)
        self.hdr_defines = dict(self.syms.defines)
        for name in sorted(os.listdir(os.path.join(ROOT, 'uapi/linux'))):
            if name.endswith('.h') and 'uapi/linux/' + name != hdr:
                self.syms.add_header('uapi/linux/' + name)
        self.kernel = Kernel(kernel_rel, self.syms)
        self.k_gets = self.kernel.gets()
        self.k_puts, self.k_pads = self.kernel.puts(self.kernel.functions)
        self.top = next(s['name'] for s in self.spec.y['attribute-sets']
                        if 'subset-of' not in s)

    def c(self, desc, fn, *args):
        self.tap.check(f'{self.fam}: {desc}', fn, *args)

    def run(self):
        self.c('spec keys are those of genetlink-legacy', self.check_keys)
        self.c('family name and version', self.check_family)
        self.c('family: kernel maxattr and policy', self.check_family_policy)
        self.c('family: what its doc says of all commands',
               self.check_family_doc)
        for d in self.spec.y.get('definitions', []):
            if d['type'] == 'const':
                self.c(f'const {d["name"]}', self.check_const, d)
            else:
                self.c(f'{d["type"]} {d["name"]}', self.check_enum, d)
        self.c('every #define of the header is in the spec',
               self.check_defines_covered)
        for s in self.spec.y['attribute-sets']:
            if 'subset-of' in s:
                continue
            self.c(f'attribute set {s["name"]}: enum {s["enum-name"]}',
                   self.check_attr_enum, s)
            for a in s['attributes']:
                if a['type'] == 'unused':
                    continue
                where = f'{s["name"]}.{a["name"]}'
                self.c(f'{where}: header kernel-doc', self.check_attr_doc,
                       s, a)
                self.c(f'{where}: the kernel puts and gets it as '
                       f'{a["type"]}', self.check_attr_use, s, a)
        self.check_policies()
        for op in self.spec.y['operations']['list']:
            if op['name'] == 'unspec':
                continue
            self.c(f'op {op["name"]}: header enum and kernel-doc',
                   self.check_op_header, op)
            self.c(f'op {op["name"]}: kernel ops entry', self.check_op_entry,
                   op)
            for kind in ('do', 'dump'):
                if kind in op:
                    self.c(f'op {op["name"]} {kind}: request attributes',
                           self.check_op_request, op, kind)
                    self.c(f'op {op["name"]} {kind}: reply attributes',
                           self.check_op_reply, op, kind)
            if 'event' in op:
                self.c(f'op {op["name"]}: event attributes and group',
                       self.check_op_event, op)
        self.c('command enum has no command the spec lacks',
               self.check_cmd_enum)
        for i, g in enumerate(self.spec.y.get('mcast-groups',
                                              {}).get('list', [])):
            self.c(f'multicast group {g["name"]}', self.check_mcgrp, i, g)
        self.c('multicast groups: as many in the kernel',
               self.check_mcgrp_count)
        self.c('the RMBD_* names the spec docs give exist',
               self.check_doc_names)

    # ---- family, consts, enums

    def check_keys(self):
        why = []

        def keys(obj, kind, where):
            if not isinstance(obj, dict):
                return
            for k in sorted(set(obj) - SPEC_KEYS[kind]):
                why.append(f'{where}: unknown key {k!r}')
        y = self.spec.y
        keys(y, 'top', 'top level')
        for d in y.get('definitions', []):
            keys(d, 'definition', d['name'])
            for e in d.get('entries', []):
                keys(e, 'entry', f'{d["name"]} entry')
        for s in y['attribute-sets']:
            keys(s, 'attribute-set', s['name'])
            for a in s['attributes']:
                keys(a, 'attribute', f'{s["name"]}.{a["name"]}')
                keys(a.get('checks'), 'checks', f'{s["name"]}.{a["name"]}')
        keys(y['operations'], 'operations', 'operations')
        for op in y['operations']['list']:
            keys(op, 'operation', op['name'])
            for kind in ('do', 'dump'):
                keys(op.get(kind), 'do', f'{op["name"]} {kind}')
                for part in ('request', 'reply'):
                    keys(op.get(kind, {}).get(part), 'message',
                         f'{op["name"]} {kind} {part}')
            keys(op.get('event'), 'message', f'{op["name"]} event')
        keys(y.get('mcast-groups'), 'mcast-groups', 'mcast-groups')
        for g in y.get('mcast-groups', {}).get('list', []):
            keys(g, 'mcast-group', g['name'])
        return why

    def check_family(self):
        y, why = self.spec.y, []
        name_def = c_upper(y['c-family-name'])
        ver_def = c_upper(y['c-version-name'])
        hv = self.syms.try_value(self.hdr_defines.get(name_def, 'X_'))
        if hv != y['name']:
            why.append(f'name: spec {y["name"]!r}, header {name_def} {hv!r}')
        vv = self.syms.try_value(self.hdr_defines.get(ver_def, 'X_'))
        if vv != y['version']:
            why.append(f'version: spec {y["version"]}, header {ver_def} {vv}')
        fam = self.kernel.family
        if fam.get('name') != name_def:
            why.append(f'kernel .name {fam.get("name")}, not {name_def}')
        if fam.get('version') != ver_def:
            why.append(f'kernel .version {fam.get("version")}, not {ver_def}')
        if y.get('protocol') not in ('genetlink', 'genetlink-c',
                                     'genetlink-legacy'):
            why.append(f'protocol {y.get("protocol")}')
        return why

    def check_family_policy(self):
        why = []
        s = self.spec.sets[self.top]
        max_name = c_upper(s.get('attr-max-name',
                                 s['name-prefix'] + 'max'))
        fam = self.kernel.family
        kp = self.spec.y.get('kernel-policy', 'split')
        if kp != 'global':
            why.append(f'kernel-policy {kp}: only global is checked')
        if fam.get('maxattr') != max_name:
            why.append(f'kernel .maxattr {fam.get("maxattr")}, spec '
                       f'{max_name}')
        pol = self.kernel.policies.get(fam.get('policy'))
        if not pol:
            why.append(f'kernel .policy {fam.get("policy")} not found')
        elif self.syms.value(pol['size']) != self.syms.value(max_name) + 1:
            why.append(f'{fam["policy"]}[{pol["size"]}]: not '
                       f'{max_name} + 1 entries')
        return why

    def check_family_doc(self):
        """Claims of the family's doc that the kernel can show."""
        doc, why = ' '.join(self.spec.y['doc'].split()), []
        ops = self.kernel.ops.values()
        if 'Every command needs CAP_NET_ADMIN' in doc:
            lax = [o['cmd'] for o in ops
                   if 'GENL_ADMIN_PERM' not in o.get('flags', '')]
            if lax:
                why.append(f'without GENL_ADMIN_PERM: {", ".join(lax)}')
        if 'Strict validation for every command' in doc:
            lax = [o['cmd'] for o in ops if 'validate' in o]
            if lax or 'resv_start_op' in self.kernel.family:
                why.append(f'lax validation: {", ".join(lax) or "family"}')
        if 'initial network namespace only' in doc and \
                self.kernel.family.get('netnsok', 'false') != 'false':
            why.append('doc: initial namespace only; kernel: netnsok')
        return why

    def define_value(self, name):
        if name not in self.hdr_defines:
            raise CheckError(f'{name}: no #define in {self.header}')
        return self.syms.value(self.hdr_defines[name])

    def check_const(self, d):
        name = c_upper(d.get('name-prefix', '') + d['name'])
        v = self.define_value(name)
        return [] if v == d['value'] else \
            [f'spec {d["value"]}, {self.header} {name} = {v}']

    def check_enum(self, d):
        cname = d.get('enum-name') or c_upper(self.fam + '-' + d['name'])
        if cname not in self.syms.enums:
            return [f'no enum {cname} in the uapi headers']
        prefix = d.get('name-prefix', c_upper(self.fam + '-' + d['name'] +
                                              '-'))
        start = d.get('value-start', 0)
        want = []
        for i, e in enumerate(d['entries']):
            ename = e['name'] if isinstance(e, dict) else e
            if d['type'] == 'flags':
                v = e.get('value', 1 << (start + i)) if isinstance(e, dict) \
                    else 1 << (start + i)
            else:
                v = e.get('value', start + i) if isinstance(e, dict) \
                    else start + i
            want.append((c_upper(prefix + ename), v))
        have = self.syms.enums[cname]
        if d['type'] == 'flags':
            have = [(n, self.syms.value(self.syms.defines[n]))
                    for n, _ in want if n in self.syms.defines] or have
        return [] if want == have else \
            [f'spec   {want}', f'header {have}']

    def check_defines_covered(self):
        """Each #define of the family's header: a const, or a name."""
        y = self.spec.y
        known = {c_upper(y['c-family-name']), c_upper(y['c-version-name'])}
        for d in y.get('definitions', []):
            if d['type'] == 'const':
                known.add(c_upper(d.get('name-prefix', '') + d['name']))
        for g in y.get('mcast-groups', {}).get('list', []):
            known.add(c_upper(g.get('c-define-name', g['name'])))
        guard = re.search(r'#ifndef\s+(\w+)\s*\n\s*#define\s+\1\b',
                          read(self.header)).group(1)
        extra = set(self.hdr_defines) - known - {guard}
        return [f'not in the spec: {", ".join(sorted(extra))}'] if extra \
            else []

    # ---- attributes

    def check_attr_enum(self, s):
        cname = s['enum-name']
        if cname not in self.syms.enums:
            return [f'no enum {cname} in the uapi headers']
        want = [(self.spec.const(s['name'], n), v)
                for n, v in self.spec.numbered(s['name']).items()]
        cnt = c_upper(s.get('attr-cnt-name', '__' + s['name-prefix'] + 'max'))
        mx = c_upper(s.get('attr-max-name', s['name-prefix'] + 'max'))
        nxt = want[-1][1] + 1
        want += [(cnt, nxt), (mx, nxt - 1)]
        have = self.syms.enums[cname]
        if want == have:
            return []
        why = []
        for (wn, wv), (hn, hv) in zip(want, have):
            if (wn, wv) != (hn, hv):
                why.append(f'spec {wn} = {wv}, header {hn} = {hv}')
                break
        return why + diff_sets('constants', {n for n, _ in want},
                               {n for n, _ in have}, 'spec', 'header')

    def check_attr_doc(self, s, a):
        """The attribute's @CONST: line of the header's kernel-doc."""
        const = self.spec.const(s['name'], a['name'])
        doc = self.syms.docs.get(s['enum-name'], {}).get(const)
        if doc is None:
            return [f'{const} has no kernel-doc line in {self.header}']
        why = []
        word = re.match(r'(\w+)', doc).group(1)
        word = {'nested': 'nest', 'padding': 'pad'}.get(word, word)
        if word != a['type']:
            why.append(f'type: spec {a["type"]}, kernel-doc "{word}"')
        if 'enum' in a:
            ename = self.spec.defs[a['enum']].get('enum-name')
            if f'enum {ename}' not in doc:
                why.append(f'kernel-doc does not name enum {ename}')
        # A range A..B whose ends resolve: the spec's checks.
        rm = re.search(r'\b(\w+)\.\.(\w+)\b', doc)
        lo, hi = (self.syms.try_value(rm.group(1)),
                  self.syms.try_value(rm.group(2))) if rm else (None, None)
        if lo is not None and hi is not None and a['type'] != 'nest':
            c = self.spec.checks(a)
            if a['type'] in INT_TYPES:
                spec_r = (c.get('min', 0), c.get('max'))
            elif a['type'] == 'binary':
                spec_r = (c.get('min-len', 0), c.get('max-len'))
            else:
                spec_r = (lo, c.get('max-len'))
            if spec_r != (lo, hi):
                why.append(f'range: kernel-doc {lo}..{hi}, spec '
                           f'{spec_r[0]}..{spec_r[1]}')
        return why

    def check_attr_use(self, s, a):
        """Types of the nla_put_*() and nla_get_*() of the attribute."""
        const = self.spec.const(s['name'], a['name'])
        used = {t for c, t, _ in self.k_puts if c == const}
        used |= self.k_gets.get(const, set())
        if a['type'] == 'pad':
            return [] if const in self.k_pads and not used else \
                [f'{const}: not only the pad of nla_put_u64_64bit()']
        bad = used - {a['type']}
        return [f'spec {a["type"]}, kernel {", ".join(sorted(bad))}'] \
            if bad else []

    # ---- policies

    def check_policies(self):
        """The family's policy and the nested ones it names."""
        todo = [(self.kernel.family.get('policy'), self.top)]
        done = set()
        while todo:
            pol_name, set_name = todo.pop(0)
            if pol_name in done:
                continue
            done.add(pol_name)
            pol = self.kernel.policies.get(pol_name)
            self.c(f'policy {pol_name}: entries of set {set_name}',
                   self.check_policy_keys, pol_name, pol, set_name)
            if not pol:
                continue
            for a, full in self.spec.attrs(set_name):
                if full['type'] == 'unused':
                    continue
                const = self.spec.const(set_name, a['name'])
                e = pol['entries'].get(const)
                desc = f'policy {pol_name}[{const}]: {full["type"]}'
                if 'checks' in full:
                    desc += ' ' + fmt(self.spec.checks(full))
                if e and e['type'] == 'NLA_REJECT':
                    desc += ', rejected on input'
                self.c(desc, self.check_policy_entry, set_name, full, const,
                       e)
                if e and e['nested']:
                    inner = full.get('nested-attributes')
                    if e['array'] and self.nest_array(inner):
                        subs = self.spec.sets[inner]['attributes']
                        one = self.spec.attr(inner, subs[0]['name'])
                        inner = one.get('nested-attributes')
                    if inner:
                        todo.append((e['nested'], inner))

    def check_policy_keys(self, pol_name, pol, set_name):
        if not pol:
            return [f'no nla_policy table {pol_name}']
        want = {self.spec.const(set_name, a['name'])
                for a, full in self.spec.attrs(set_name)
                if full['type'] != 'unused'}
        return diff_sets('entries', want, set(pol['entries']), 'spec',
                         pol_name)

    def nest_array(self, set_name):
        """Whether a nest of set_name is an array of nests.

        NLA_POLICY_NESTED_ARRAY(P) validates each attribute inside as a
        nest of P: a spec's subset of one multi-attr nest.
        """
        s = self.spec.sets.get(set_name, {})
        subs = s.get('attributes', [])
        return 'subset-of' in s and len(subs) == 1 and \
            bool(subs[0].get('multi-attr')) and \
            self.spec.attr(set_name, subs[0]['name'])['type'] == 'nest'

    def check_policy_entry(self, set_name, a, const, e):
        if e is None:
            return [f'no entry for {const}']
        why, t = [], a['type']
        doc = ' '.join((a.get('doc', '') + ' ' +
                        self.spec.sets[set_name].get('doc', '')).split())
        out_only = re.search(r'\boutput only\b|\brejected\b', doc, re.I)
        if e['type'] == 'NLA_REJECT':
            if t != 'pad' and not out_only:
                why.append('NLA_REJECT, but the spec does not say '
                           '"output only" or "rejected"')
            return why
        if re.match(r'output only', a.get('doc', ''), re.I):
            why.append(f'the spec says output only; the policy takes it '
                       f'({e["type"]})')
        if e['type'] not in NLA_OF_TYPE.get(t, set()):
            why.append(f'type: spec {t}, policy {e["type"]}')
        if t == 'nest':
            if not e['nested']:
                why.append('a nest without a nested policy')
            else:
                inner = a.get('nested-attributes')
                array = self.nest_array(inner)
                if e['array'] != array:
                    what = 'an array of nests' if array else 'one nest'
                    why.append(f'nested-attributes {inner}: {what} in the '
                               f'spec, policy {e["text"]}')
        have = dict(e['limits'])
        want = self.spec.checks(a)
        if t == 'binary' and 'min-len' in want and 'min-len' not in have:
            code = self.kernel.min_len_in_code(const)
            if code is not None:
                have['min-len'] = code
        have, want = norm_limits(have, t), norm_limits(want, t)
        if have != want:
            why.append(f'checks: spec {fmt(want)}, policy {fmt(have)}')
        if 'enum' in a and t in INT_TYPES:
            lo, hi = self.spec.enum_range(a['enum'])
            if norm_limits({'min': lo, 'max': hi}, t) != have:
                why.append(f'enum {a["enum"]} is {lo}..{hi}, policy '
                           f'{fmt(have)}')
        return why

    # ---- operations

    def op_const(self, op):
        return c_upper(self.spec.y['operations'].get('name-prefix', '') +
                       op['name'])

    def op_value(self, op):
        nxt = 0
        for o in self.spec.y['operations']['list']:
            v = o.get('value', nxt)
            if o is op:
                return v
            nxt = v + 1
        raise CheckError('op not in the list')

    def resolve(self, set_name, token):
        """An upper-case name of a doc as an attribute of the set, if any."""
        names = {self.spec.const(set_name, a['name']): a['name']
                 for a in self.spec.base(set_name)['attributes']}
        prefix = c_upper(self.spec.base(set_name)['name-prefix'])
        short = {c[len(prefix):]: n for c, n in names.items()}
        if token in names:
            return names[token]
        if token in short:
            return short[token]
        # The target's docs drop the first word: NAME for EXPORT_NAME.
        tail = [n for s, n in short.items() if s.split('_', 1)[-1] == token]
        return tail[0] if len(tail) == 1 else None

    def check_op_header(self, op):
        why, const = [], self.op_const(op)
        enum = self.spec.y['operations'].get('enum-name')
        v = self.syms.consts.get(const)
        if v is None:
            return [f'no {const} in {self.header}']
        if v != self.op_value(op):
            why.append(f'{const}: spec {self.op_value(op)}, header {v}')
        doc = self.syms.docs.get(enum, {}).get(const)
        if doc is None:
            return why + [f'{const} has no kernel-doc line']
        set_name = op['attribute-set']
        named = {self.resolve(set_name, t)
                 for t in re.findall(r'\b[A-Z][A-Z0-9_]*[A-Z0-9]\b', doc)}
        named.discard(None)
        req = set()
        allowed = set()
        for kind in ('do', 'dump'):
            for part in ('request', 'reply'):
                attrs = set(op.get(kind, {}).get(part, {})
                            .get('attributes', []))
                allowed |= attrs
                if part == 'request':
                    req |= attrs
        allowed |= set(op.get('event', {}).get('attributes', []))
        allowed |= self.spec.nested_sets(set_name, allowed)
        if named - allowed:
            why.append(f'kernel-doc names {", ".join(sorted(named - allowed))}'
                       f', not in the spec\'s messages of {op["name"]}')
        if req - named:
            why.append(f'kernel-doc does not name request attributes '
                       f'{", ".join(sorted(req - named))}')
        return why

    def kernel_op(self, op):
        return self.kernel.ops.get(self.op_value(op))

    def check_op_entry(self, op):
        k, why = self.kernel_op(op), []
        if 'do' not in op and 'dump' not in op:
            return [f'event only, but the kernel has an op for it: {k}'] \
                if k else []
        if not k:
            return [f'no ops entry for {self.op_const(op)}']
        for kind, field in (('do', 'doit'), ('dump', 'dumpit')):
            if (kind in op) != (field in k):
                why.append(f'spec {kind}: {"yes" if kind in op else "no"}, '
                           f'kernel .{field}: {k.get(field, "none")}')
        want = {OP_FLAGS[f] for f in op.get('flags', [])}
        have = set(re.findall(r'GENL_\w+', k.get('flags', '')))
        why += diff_sets('flags', want, have)
        want = {VALIDATE_FLAGS[f] for f in op.get('dont-validate', [])}
        have = set(re.findall(r'GENL_\w+', k.get('validate', '')))
        why += diff_sets('validation', want, have)
        if 'policy' in k or 'maxattr' in k:
            why.append('a policy of its own: only the global one is checked')
        return why

    def set_consts(self, set_name, consts):
        """{attr name} of the set's constants among consts."""
        names = {self.spec.const(set_name, a['name']): a
                 for a in self.spec.base(set_name)['attributes']}
        return {names[c]['name'] for c in consts
                if c in names and names[c]['type'] != 'pad'}

    def check_op_request(self, op, kind):
        k = self.kernel_op(op) or {}
        handler = k.get({'do': 'doit', 'dump': 'dumpit'}[kind])
        if not handler:
            return []   # check_op_entry says so
        set_name = op['attribute-set']
        want = set(op[kind].get('request', {}).get('attributes', []))
        funcs = self.kernel.closure([handler])
        read_ = self.set_consts(set_name, self.kernel.reads(funcs))
        why = []
        if want - read_:
            why.append(f'the spec\'s request has '
                       f'{", ".join(sorted(want - read_))}, which '
                       f'{handler}() never reads')
        pol = self.kernel.policies[self.kernel.family['policy']]['entries']
        rejected = {n for n in want
                    if pol.get(self.spec.const(set_name, n),
                               {}).get('type') == 'NLA_REJECT'}
        if rejected:
            why.append(f'request attributes the policy rejects: '
                       f'{", ".join(sorted(rejected))}')
        # What else the handler reads, it must refuse.
        extra = read_ - want - self.spec.nested_sets(set_name, want)
        taken = {n for n in extra
                 if not self.kernel.refuses(funcs,
                                            self.spec.const(set_name, n))}
        if taken:
            why.append(f'{handler}() reads {", ".join(sorted(taken))}, '
                       f'which the spec\'s request lacks, and does not '
                       f'refuse it')
        return why

    def put_attrs(self, funcs, set_name, in_event):
        puts, _ = self.kernel.puts(funcs)
        skip = '!' + EVENT_GUARD if in_event else EVENT_GUARD
        return self.set_consts(set_name, {c for c, _, g in puts if g != skip})

    def check_op_reply(self, op, kind):
        k = self.kernel_op(op) or {}
        handler = k.get({'do': 'doit', 'dump': 'dumpit'}[kind])
        if not handler:
            return []
        set_name = op['attribute-set']
        want = set(op[kind].get('reply', {}).get('attributes', []))
        have = self.put_attrs(self.kernel.closure([handler]), set_name, False)
        have -= self.spec.nested_sets(set_name, want)
        return diff_sets('reply', want, have, 'spec', f'{handler}()')

    def check_op_event(self, op):
        const = self.op_const(op)
        senders = [f for f, body in self.kernel.functions.items()
                   if re.search(r'\b' + const + r'\b', body)]
        if not senders:
            return [f'no function of the kernel sends {const}']
        set_name = op['attribute-set']
        want = set(op['event'].get('attributes', []))
        funcs = self.kernel.closure(senders)
        have = self.put_attrs(funcs, set_name, True)
        have -= self.spec.nested_sets(set_name, want)
        why = diff_sets('event', want, have, 'spec', f'{", ".join(senders)}()')
        groups = self.spec.y.get('mcast-groups', {}).get('list', [])
        for f in senders:
            for _, args, _, _ in self.kernel.calls(self.kernel.functions[f],
                                                   r'genlmsg_multicast'):
                idx = self.syms.value(args[3])
                kname = self.kernel.mcgrps[idx]['name'] \
                    if idx < len(self.kernel.mcgrps) else None
                sname = groups[idx]['name'] if idx < len(groups) else None
                if sname != op.get('mcgrp') or \
                        self.syms.try_value(kname or 'X_') != op.get('mcgrp'):
                    why.append(f'{f}() sends to group {idx} ({kname}), '
                               f'the spec to {op.get("mcgrp")}')
        return why

    def check_cmd_enum(self):
        enum = self.spec.y['operations'].get('enum-name')
        have = {n for n, _ in self.syms.enums.get(enum, [])
                if not n.endswith('_MAX')}
        want = {self.op_const(o) for o in self.spec.y['operations']['list']}
        why = diff_sets('commands', want, have, 'spec', 'header')
        kops = {o['cmd'] for o in self.kernel.ops.values()}
        return why + [f'kernel ops for commands the spec lacks: {c}'
                      for c in sorted(kops - want)]

    # ---- multicast groups

    def check_mcgrp(self, i, g):
        why = []
        define = c_upper(g.get('c-define-name', g['name']))
        v = self.syms.try_value(self.hdr_defines.get(define, 'X_'))
        if v != g['name']:
            why.append(f'{define} is {v!r}, the spec\'s name {g["name"]!r}')
        if i >= len(self.kernel.mcgrps):
            return why + [f'the kernel has no group {i}']
        k = self.kernel.mcgrps[i]
        if k.get('name') != define:
            why.append(f'kernel group {i} is {k.get("name")}, not {define}')
        want = {MCGRP_FLAGS[f] for f in g.get('flags', [])}
        have = set(re.findall(r'GENL_\w+', k.get('flags', '')))
        why += diff_sets('flags', want, have)
        return why

    def check_mcgrp_count(self):
        n = len(self.spec.y.get('mcast-groups', {}).get('list', []))
        return [] if n == len(self.kernel.mcgrps) else \
            [f'spec {n}, kernel {len(self.kernel.mcgrps)}']

    def check_doc_names(self):
        text = yaml.safe_dump(self.spec.y)
        names = set(re.findall(r'\bRMBD_[A-Z0-9_]+\b', text))
        missing = {n for n in names
                   if n not in self.syms.defines and n not in self.syms.consts}
        return [f'no such constant: {", ".join(sorted(missing))}'] \
            if missing else []


def main():
    tap = Tap()
    print('TAP version 13')
    for spec_rel, kernel_rel in FAMILIES:
        try:
            FamilyCheck(tap, spec_rel, kernel_rel).run()
        except (CheckError, OSError, KeyError, yaml.YAMLError) as e:
            tap.result(False, f'{spec_rel} against {kernel_rel}',
                       [f'cannot read: {e!r}'])
    print(f'1..{tap.n}')
    return 1 if tap.failed else 0


if __name__ == '__main__':
    sys.exit(main())

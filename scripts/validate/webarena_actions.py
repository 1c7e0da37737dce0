"""Compares webfreeze's WebArena action parser with WebArena's own create_id_based_action
(browser_env/actions.py from PyPI's libwebarena wheel) on the same action strings.
Usage: webarena_actions.py ACTIONS_PY PARSE_ACTIONS_BIN"""
import re, sys, subprocess
src = open(sys.argv[1]).read()
i = src.index('def create_id_based_action(')
j = src.find('\ndef ', i + 10); j = len(src) if j < 0 else j
fn = src[i:j]
fn = fn.replace('-> Action', '')
ns = {'re': re}
class ActionParsingError(Exception): pass
ns['ActionParsingError'] = ActionParsingError
ns['create_click_action'] = lambda element_id: ('click', int(element_id))
ns['create_hover_action'] = lambda element_id: ('hover', int(element_id))
ns['create_type_action'] = lambda text, element_id: ('type', int(element_id), text)
ns['create_key_press_action'] = lambda key_comb: ('press', key_comb)
ns['create_scroll_action'] = lambda direction: ('scroll', direction)
ns['create_goto_url_action'] = lambda url: ('goto', url)
ns['create_new_tab_action'] = lambda: ('new_tab',)
ns['create_go_back_action'] = lambda: ('go_back',)
ns['create_go_forward_action'] = lambda: ('go_forward',)
ns['create_page_focus_action'] = lambda n: ('tab_focus', n)
ns['create_page_close_action'] = lambda: ('close_tab',)
ns['create_stop_action'] = lambda a: ('stop', a)
exec(fn, ns)
ids = ['0', '7', '1234']
texts = ['restaurants near CMU', 'a [b]', '$25.99', 'N/A', 'x', 'Pittsburgh, PA']
cases = []
for i in ids:
    cases += [f'click [{i}]', f'click[{i}]', f'hover [{i}]']
    for t in texts:
        cases += [f'type [{i}] [{t}] [1]', f'type [{i}] [{t}] [0]', f'type [{i}] [{t}]', f'type[{i}][{t}][0]']
for k in ['Enter', 'Control+Enter', 'Meta+a', 'PageDown', 'Shift+ArrowDown']:
    cases.append(f'press [{k}]')
cases += ['scroll [up]', 'scroll [down]', 'scroll down', 'new_tab', 'go_back', 'go_forward', 'close_tab',
          'tab_focus [0]', 'tab_focus [2]', 'goto [http://localhost:7770/catalog?q=a b]', 'goto [http://x/?a=[1]]',
          'stop [$25.99]', 'stop [N/A]', 'stop', 'stop []', 'stop [Pittsburgh, PA]',
          'click [abc]', 'scroll [left]', 'jump [3]', 'type [3]']
def canon(a):
    k = a[0]
    if k == 'type':
        t = a[2]; enter = t.endswith('\n')
        return f"type [{a[1]}] [{t[:-1] if enter else t}] [{1 if enter else 0}]"
    if k in ('click', 'hover'): return f"{k} [{a[1]}]"
    if k == 'press': return f"press [{a[1]}]"
    if k == 'scroll': return f"scroll [{a[1]}]"
    if k == 'goto': return f"goto [{a[1]}]"
    if k == 'tab_focus': return f"tab_focus [{a[1]}]"
    if k == 'stop': return f"stop [{a[1]}]"
    return k
theirs = []
for c in cases:
    try: theirs.append(canon(ns['create_id_based_action'](c)))
    except ActionParsingError as e: theirs.append('ERROR')
ours = subprocess.run([sys.argv[2]], input='\n'.join(cases) + '\n', capture_output=True, text=True).stdout.splitlines()
agree = 0; both_ok = 0; diffs = []
for c, t, o in zip(cases, theirs, ours):
    o2 = 'ERROR' if o.startswith('ERROR') else o
    if t == o2: agree += 1
    else: diffs.append((c, t, o))
print(f"{agree}/{len(cases)} agree")
for d in diffs: print(d)

"""Compares webfreeze's accessibility-tree text with WebArena's own renderer (browser_env/processors.py
from PyPI's libwebarena wheel) on the same CDP data, dumped by `axtree_dump` (one JSON line per page).
WebArena's fetch (viewport filter), parse and clean-up run unchanged on the dumped nodes and rects;
lines are compared without their ids (WebArena prints Chromium's AX node ids, webfreeze numbers lines).
Usage: webarena_axtree.py BROWSER_ENV_DIR NUMPY_SITE_PACKAGES < dump.jsonl"""
import json, re, sys
sys.path.insert(0, sys.argv[2])
env = sys.argv[1]
consts = {}
exec(open(f'{env}/constants.py').read(), consts)
src = open(f'{env}/processors.py').read()
src = re.sub(r'from \.constants import \([^)]*\)', '', src, flags=re.S)
src = re.sub(r'from \.utils import \([^)]*\)', '', src, flags=re.S)
src = src.replace('from gymnasium import spaces', 'class spaces:\n    Dict = Box = Text = dict')
src = src.replace('from playwright.sync_api import CDPSession, Page, ViewportSize', 'CDPSession = Page = ViewportSize = object')
ns = {'IGNORED_ACTREE_PROPERTIES': consts['IGNORED_ACTREE_PROPERTIES'], 'ASCII_CHARSET': '', 'FREQ_UNICODE_CHARSET': '',
      'UTTERANCE_MAX_LENGTH': 0, 'png_bytes_to_numpy': None}
for n in ['AccessibilityTree', 'AccessibilityTreeNode', 'BrowserConfig', 'BrowserInfo', 'DOMNode', 'DOMTree', 'Observation']:
    ns[n] = dict
exec(src, ns)
P = ns['TextObervationProcessor']

def strip_ids(text):
    return [re.sub(r'^(\t*)\[\d+\] ', r'\1', l) for l in text.split('\n') if l.strip()]

same = total = 0
for line in sys.stdin:
    d = json.loads(line)
    class Client:
        def send(self, method, params):
            assert method == 'Accessibility.getFullAXTree'
            return {'nodes': json.loads(json.dumps(d['nodes']))}
    class Me:
        @staticmethod
        def get_bounding_client_rect(client, backend_id):
            r = d['rects'].get(str(backend_id))
            return {'result': {'value': r}} if r else {'result': {'subtype': 'error'}}
        get_element_in_viewport_ratio = staticmethod(P.get_element_in_viewport_ratio)
    info = {'config': {'win_width': d['win'][0], 'win_height': d['win'][1]}}
    tree = P.fetch_page_accessibility_tree(Me(), info, Client(), True)
    text, _ = P.parse_accessibility_tree(tree)
    theirs = strip_ids(P.clean_accesibility_tree(text))
    ours = strip_ids(d['ours'])
    total += 1
    ok = theirs == ours
    same += ok
    print(f"{d['file']}: {len(ours)} lines (webfreeze) vs {len(theirs)} (WebArena): {'same' if ok else 'DIFFERENT'}")
    if not ok:
        import difflib
        for l in list(difflib.unified_diff(theirs, ours, 'webarena', 'webfreeze', lineterm='', n=0))[:20]:
            print('   ', l)
print(f"{same}/{total} pages give the same text (ids aside)")

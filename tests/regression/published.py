"""The figures README.md and docs/evaluation.md publish, as measured, and how closely they must hold.

``FIGURES[run id][row label][metric]`` is what the run (``runs.RUNS[run id]``, the command the docs
print) measured on this machine kind (2 CPU cores, the managed OpenSearch 2.19 node, MiniLM on the
CPU). ``test_published_figures`` re-measures every row and fails when a metric moves beyond
:func:`tolerance_for`; ``test_docs_publish_only_guarded_figures`` fails when the docs show a figure
that is not here (or in ``PAPER`` / ``NOT_REPRODUCED``). Ids ending in ``/slice`` are the CI stand-ins
of slow runs (fewer folds), with values of their own that the docs do not print.

Changing a figure here is publishing a new one: re-measure with the command, update the docs and
``docs/figures/`` in the same commit, and say why in its message.
"""

from __future__ import annotations

__all__ = ["TOLERANCE", "FIGURES", "PAPER", "NOT_REPRODUCED", "tolerance_for"]

#: ±0.005 on every NDCG / recall / mAP / TRACC / set-size figure: the runs are deterministic on this
#: machine kind (the same numbers came out of two separate runs), so a wider band would hide regressions.
TOLERANCE = 0.005
#: Learned weight vectors (Table 5 form, mean over folds): MiniLM's are 2–10 in size and the docs print
#: them to 2–3 decimals, so they are held to ±0.05 — enough to catch a changed recipe or feature.
WEIGHTS_TOLERANCE = 0.05


def tolerance_for(run_id: str, row: str) -> float:
    """The absolute tolerance of one published row."""
    return WEIGHTS_TOLERANCE if row.startswith("learned weights") else TOLERANCE


#: Papers' figures the docs quote beside ours (besides ``toolsift.evaluation.mftr.ablations.PAPER_NDCG10``):
#: the Tool-to-Agent paper's LiveMCPBench row and PTR's, by what they are.
PAPER: dict[str, float] = {}

#: Numbers the docs keep although no toolsift command reproduces them today, and why.
NOT_REPRODUCED: dict[float, str] = {
    0.5346: "APIBank Full-Doc BM25 with an English analyzer (stemming): an alternative mapping tried and not kept",
    0.4147: "Toolink Full-Doc BM25 with an English analyzer (stemming): an alternative mapping tried and not kept",
    0.5684: "APIBank Full-Doc BM25 with the identifier-splitting analyzer: an alternative mapping not kept for full_doc",
    0.6162: "APIBank MiniLM Full-Doc from an earlier harness that sorted the JSON keys (replaced)",
    0.3699: "Toolink MiniLM Full-Doc from an earlier harness that sorted the JSON keys (replaced)",
    0.2631: "PTR cold-start ratio sweep (r = 0) on 600 ToolLens training queries, run while choosing the default",
    0.2633: "PTR cold-start ratio sweep (r = 0.2) on 600 ToolLens training queries, run while choosing the default",
    0.2642: "PTR cold-start ratio sweep (r = 0.25) on 600 ToolLens training queries, run while choosing the default",
    0.2647: "PTR cold-start ratio sweep (r = 0.3) on 600 ToolLens training queries, run while choosing the default",
    0.2561: "PTR cold-start ratio sweep (r = 0.5) on 600 ToolLens training queries, run while choosing the default",
    0.3940: "mixed MiniLM Full-Doc NDCG@10 over the index in several segments, before one-segment bulk loads",
    0.7095: "Toolink MiniLM no-LLM + instruction + rank NDCG@10 over the index in several segments (before)",
    0.8669: "Toolink MiniLM first-stage recall@100 over the index in several segments (before)",
    0.3798: "Toolink MiniLM Full-Doc NDCG@10 over the index in several segments (before one-segment bulk loads)",
    0.7495: "APIBank MFTR + cross-encoder NDCG@10 with an unseeded classification head (before seeding)",
    0.5531: "Toolink MFTR + cross-encoder NDCG@10 with an unseeded classification head (before seeding)",
}

FIGURES: dict[str, dict[str, dict[str, float]]] = {
    'tool/apibank/full-doc/bm25': {
        'full-doc · bm25': {'ndcg@10': 0.5172, 'recall@10': 0.6139, 'completeness@10': 0.4059, 'ndcg@5': 0.5032, 'recall@5': 0.5792},
    },
    'tool/apibank/full-doc/minilm': {
        'full-doc · minilm': {'ndcg@10': 0.6026, 'recall@10': 0.7335, 'completeness@10': 0.5347, 'ndcg@5': 0.584, 'recall@5': 0.6873},
    },
    'tool/apibank/multi-field/bm25': {
        'multi-field · bm25': {'ndcg@10': 0.5732, 'recall@10': 0.6469, 'completeness@10': 0.4257, 'ndcg@5': 0.5652, 'recall@5': 0.6262},
    },
    'tool/apibank/multi-field/minilm': {
        'multi-field · minilm': {'ndcg@10': 0.6529, 'recall@10': 0.7376, 'completeness@10': 0.5149, 'ndcg@5': 0.642, 'recall@5': 0.7096},
    },
    'tool/apibank/multi-field/hybrid': {
        'multi-field · hybrid': {'ndcg@10': 0.6327, 'recall@10': 0.7228, 'completeness@10': 0.4851, 'ndcg@5': 0.6056, 'recall@5': 0.6535},
    },
    'tool/toolink/full-doc/bm25': {
        'full-doc · bm25': {'ndcg@10': 0.3823, 'recall@10': 0.4423, 'completeness@10': 0.3541, 'ndcg@5': 0.3726, 'recall@5': 0.4162},
    },
    'tool/toolink/full-doc/minilm': {
        'full-doc · minilm': {'ndcg@10': 0.381, 'recall@10': 0.4589, 'completeness@10': 0.3622, 'ndcg@5': 0.35, 'recall@5': 0.3734},
    },
    'tool/toolink/multi-field/bm25': {
        'multi-field · bm25': {'ndcg@10': 0.4508, 'recall@10': 0.502, 'completeness@10': 0.3702, 'ndcg@5': 0.437, 'recall@5': 0.4678},
    },
    'tool/toolink/multi-field/minilm': {
        'multi-field · minilm': {'ndcg@10': 0.4381, 'recall@10': 0.4891, 'completeness@10': 0.3964, 'ndcg@5': 0.422, 'recall@5': 0.4448},
    },
    'tool/toolink/multi-field/hybrid': {
        'multi-field · hybrid': {'ndcg@10': 0.4669, 'recall@10': 0.5275, 'completeness@10': 0.4064, 'ndcg@5': 0.4502, 'recall@5': 0.4849},
    },
    'agent/livemcpbench/minilm': {
        'step-wise · MiniLM · CombMAX merge [main]': {'recall@1': 0.4246, 'recall@3': 0.7246, 'recall@5': 0.8362, 'map@1': 0.4246, 'map@3': 0.619, 'map@5': 0.6613, 'ndcg@1': 0.5957, 'ndcg@3': 0.6797, 'ndcg@5': 0.73},
        'step-wise · MiniLM · reciprocal-rank merge': {'recall@1': 0.4436, 'recall@3': 0.6963, 'recall@5': 0.7995, 'map@1': 0.4436, 'map@3': 0.6067, 'map@5': 0.6495, 'ndcg@1': 0.6383, 'ndcg@3': 0.6692, 'ndcg@5': 0.7166},
        'direct (whole question) · MiniLM': {'recall@1': 0.3599, 'recall@3': 0.5443, 'recall@5': 0.6241, 'map@1': 0.3599, 'map@3': 0.4582, 'map@5': 0.4846, 'ndcg@1': 0.5319, 'ndcg@3': 0.5223, 'ndcg@5': 0.5566},
        'own decomposition (rule-based needs) · MiniLM': {'recall@1': 0.3644, 'recall@3': 0.5168, 'recall@5': 0.6082, 'map@1': 0.3644, 'map@3': 0.4475, 'map@5': 0.4774, 'ndcg@1': 0.5, 'ndcg@3': 0.5026, 'ndcg@5': 0.5445},
        'agent-only index (server name + description) · step-wise · MiniLM': {'recall@1': 0.3768, 'recall@3': 0.5775, 'recall@5': 0.6239, 'map@1': 0.3768, 'map@3': 0.4998, 'map@5': 0.5168, 'ndcg@1': 0.5426, 'ndcg@3': 0.5582, 'ndcg@5': 0.5783},
        'plain joint index (description vectors) · step-wise · MiniLM · reciprocal-rank merge': {'recall@1': 0.4521, 'recall@3': 0.656, 'recall@5': 0.7096, 'map@1': 0.4521, 'map@3': 0.5804, 'map@5': 0.6002, 'ndcg@1': 0.6383, 'ndcg@3': 0.6377, 'ndcg@5': 0.663},
        'step-wise · BM25 · CombMAX merge': {'recall@1': 0.4259, 'recall@3': 0.6408, 'recall@5': 0.7427, 'map@1': 0.4259, 'map@3': 0.5597, 'map@5': 0.5969, 'ndcg@1': 0.5957, 'ndcg@3': 0.6188, 'ndcg@5': 0.6643},
        'step-wise · BM25 + MiniLM · CombMAX merge': {'recall@1': 0.5624, 'recall@3': 0.764, 'recall@5': 0.8415, 'map@1': 0.5624, 'map@3': 0.7142, 'map@5': 0.7505, 'ndcg@1': 0.7872, 'ndcg@3': 0.7658, 'ndcg@5': 0.8},
    },
    'request/livemcpbench': {
        'toolsift search_tools (default: multi-need, hybrid)': {'tool_R@5': 0.5392, 'tool_R@10': 0.5957, 'agent_R@5': 0.7255, 'agent_nDCG@5': 0.6333},
        'toolsift search_tools (default: multi-need, hybrid) · half A': {'tool_R@5': 0.5965, 'tool_R@10': 0.6669, 'agent_R@5': 0.7312, 'agent_nDCG@5': 0.6555},
        'toolsift search_tools (default: multi-need, hybrid) · half B': {'tool_R@5': 0.4819, 'tool_R@10': 0.5245, 'agent_R@5': 0.7199, 'agent_nDCG@5': 0.6111},
        'toolsift search_tools, multi_need off (one multi-field hybrid query)': {'tool_R@5': 0.3441, 'tool_R@10': 0.4363, 'agent_R@5': 0.5606, 'agent_nDCG@5': 0.4914},
        'toolsift search_tools, multi_need off (one multi-field hybrid query) · half A': {'tool_R@5': 0.3825, 'tool_R@10': 0.4392, 'agent_R@5': 0.5539, 'agent_nDCG@5': 0.4863},
        'toolsift search_tools, multi_need off (one multi-field hybrid query) · half B': {'tool_R@5': 0.3057, 'tool_R@10': 0.4333, 'agent_R@5': 0.5674, 'agent_nDCG@5': 0.4964},
        'toolsift multi-need, BM25': {'tool_R@5': 0.2912, 'tool_R@10': 0.4044, 'agent_R@5': 0.5163, 'agent_nDCG@5': 0.4472},
        'toolsift multi-need, BM25 · half A': {'tool_R@5': 0.3217, 'tool_R@10': 0.424, 'agent_R@5': 0.4954, 'agent_nDCG@5': 0.4385},
        'toolsift multi-need, BM25 · half B': {'tool_R@5': 0.2606, 'tool_R@10': 0.3848, 'agent_R@5': 0.5372, 'agent_nDCG@5': 0.4559},
        'toolsift one multi-field query, BM25': {'tool_R@5': 0.3255, 'tool_R@10': 0.3778, 'agent_R@5': 0.5243, 'agent_nDCG@5': 0.4488},
        'toolsift one multi-field query, BM25 · half A': {'tool_R@5': 0.3417, 'tool_R@10': 0.3984, 'agent_R@5': 0.5113, 'agent_nDCG@5': 0.444},
        'toolsift one multi-field query, BM25 · half B': {'tool_R@5': 0.3092, 'tool_R@10': 0.3571, 'agent_R@5': 0.5372, 'agent_nDCG@5': 0.4536},
        'toolsift multi-need, MiniLM': {'tool_R@5': 0.4473, 'tool_R@10': 0.5647, 'agent_R@5': 0.675, 'agent_nDCG@5': 0.5903},
        'toolsift multi-need, MiniLM · half A': {'tool_R@5': 0.4949, 'tool_R@10': 0.5729, 'agent_R@5': 0.6851, 'agent_nDCG@5': 0.61},
        'toolsift multi-need, MiniLM · half B': {'tool_R@5': 0.3996, 'tool_R@10': 0.5564, 'agent_R@5': 0.6649, 'agent_nDCG@5': 0.5707},
        'toolsift one multi-field query, MiniLM': {'tool_R@5': 0.273, 'tool_R@10': 0.3895, 'agent_R@5': 0.5532, 'agent_nDCG@5': 0.4802},
        'toolsift one multi-field query, MiniLM · half A': {'tool_R@5': 0.2872, 'tool_R@10': 0.3706, 'agent_R@5': 0.5638, 'agent_nDCG@5': 0.4954},
        'toolsift one multi-field query, MiniLM · half B': {'tool_R@5': 0.2589, 'tool_R@10': 0.4085, 'agent_R@5': 0.5426, 'agent_nDCG@5': 0.465},
        'FastMCP search_tools (BM25SearchTransform) [peer]': {'tool_R@5': 0.3153, 'tool_R@10': 0.4051, 'agent_R@5': 0.5402, 'agent_nDCG@5': 0.5006},
        'FastMCP search_tools (BM25SearchTransform) [peer] · half A': {'tool_R@5': 0.3399, 'tool_R@10': 0.4091, 'agent_R@5': 0.5167, 'agent_nDCG@5': 0.4889},
        'FastMCP search_tools (BM25SearchTransform) [peer] · half B': {'tool_R@5': 0.2908, 'tool_R@10': 0.4011, 'agent_R@5': 0.5638, 'agent_nDCG@5': 0.5124},
    },
    'screen/injection-set': {
        'all': {'cases': 66.0, 'malicious': 31.0, 'benign': 35.0, 'case_precision': 1.0, 'case_recall': 1.0, 'tool_precision': 1.0, 'tool_recall': 1.0},
        'half A': {'cases': 36.0, 'malicious': 16.0, 'benign': 20.0, 'case_precision': 1.0, 'case_recall': 1.0, 'tool_precision': 1.0, 'tool_recall': 1.0},
        'half B': {'cases': 30.0, 'malicious': 15.0, 'benign': 15.0, 'case_precision': 1.0, 'case_recall': 1.0, 'tool_precision': 1.0, 'tool_recall': 1.0},
        'English': {'cases': 66.0, 'malicious': 31.0, 'benign': 35.0, 'case_precision': 1.0, 'case_recall': 1.0, 'tool_precision': 1.0, 'tool_recall': 1.0},
    },
    'screen/blind-4': {
        'all': {'cases': 100.0, 'malicious': 50.0, 'benign': 50.0, 'case_precision': 0.9714, 'case_recall': 0.68, 'tool_precision': 0.9722, 'tool_recall': 0.6604},
        'half A': {'cases': 55.0, 'malicious': 25.0, 'benign': 30.0, 'case_precision': 1.0, 'case_recall': 0.8, 'tool_precision': 1.0, 'tool_recall': 0.7692},
        'half B': {'cases': 45.0, 'malicious': 25.0, 'benign': 20.0, 'case_precision': 0.9333, 'case_recall': 0.56, 'tool_precision': 0.9375, 'tool_recall': 0.5556},
        'English': {'cases': 44.0, 'malicious': 22.0, 'benign': 22.0, 'case_precision': 1.0, 'case_recall': 0.6364, 'tool_precision': 1.0, 'tool_recall': 0.6087},
        'other languages': {'cases': 56.0, 'malicious': 28.0, 'benign': 28.0, 'case_precision': 0.9524, 'case_recall': 0.7143, 'tool_precision': 0.9545, 'tool_recall': 0.7},
    },
    'screen/blind-5': {
        'all': {'cases': 100.0, 'malicious': 50.0, 'benign': 50.0, 'case_precision': 0.902, 'case_recall': 0.92, 'tool_precision': 0.9074, 'tool_recall': 0.9074},
        'half A': {'cases': 48.0, 'malicious': 29.0, 'benign': 19.0, 'case_precision': 0.9643, 'case_recall': 0.931, 'tool_precision': 0.9643, 'tool_recall': 0.9},
        'half B': {'cases': 52.0, 'malicious': 21.0, 'benign': 31.0, 'case_precision': 0.8261, 'case_recall': 0.9048, 'tool_precision': 0.8462, 'tool_recall': 0.9167},
        'English': {'cases': 40.0, 'malicious': 20.0, 'benign': 20.0, 'case_precision': 0.9, 'case_recall': 0.9, 'tool_precision': 0.9091, 'tool_recall': 0.9091},
        'other languages': {'cases': 60.0, 'malicious': 30.0, 'benign': 30.0, 'case_precision': 0.9032, 'case_recall': 0.9333, 'tool_precision': 0.9062, 'tool_recall': 0.9062},
    },
    'screen/benign-registry': {
        'all catalogs': {'tools': 804.0, 'flagged': 2.0},
        'data/benign_registry.json': {'tools': 804.0, 'flagged': 2.0},
    },
    'screen/real-catalogs': {
        'all catalogs': {'tools': 2896.0, 'flagged': 3.0},
        'apibank/tools.json': {'tools': 101.0, 'flagged': 0.0},
        'toolink/tools.json': {'tools': 1804.0, 'flagged': 0.0},
        'livemcpbench/tools.json': {'tools': 527.0, 'flagged': 3.0},
        'toollens/corpus.jsonl': {'tools': 464.0, 'flagged': 0.0},
        'livemcpbench/tools.json · servers not trained on': {'tools': 268.0, 'flagged': 2.0},
    },
    'screen/real-catalogs/slice': {
        'all catalogs': {'tools': 527.0, 'flagged': 3.0},
        'livemcpbench/tools.json': {'tools': 527.0, 'flagged': 3.0},
        'livemcpbench/tools.json · servers not trained on': {'tools': 268.0, 'flagged': 2.0},
    },
    'prompts/injection-set': {
        'standardise': {'tools': 122.0, 'answered': 122.0, 'invalid': 0.0, 'answers_changing_parameters': 122.0, 'answers_carrying_hostile_text': 31.0, 'documents_changing_parameters': 0.0},
        'rewrite': {'cases': 66.0, 'answered': 66.0, 'invalid': 0.0, 'flagged_tools_shown': 0.0, 'unflagged_malicious_shown': 0.0, 'answers_carrying_hostile_text': 3.0, 'refused': 3.0, 'benign_refused': 2.0, 'queries_holding_malicious_tool_text': 0.0},
    },
    'opensearch/toolret': {
        'apibank': {'ndcg@10_toolsift': 0.6327, 'ndcg@10_opensearch': 0.6327, 'ndcg@10_difference': 0.0, 'identical_top10': 101.0, 'n_queries': 101.0},
        'toolink': {'ndcg@10_toolsift': 0.4669, 'ndcg@10_opensearch': 0.4669, 'ndcg@10_difference': 0.0, 'identical_top10': 497.0, 'n_queries': 497.0},
    },
    'opensearch/toolret/slice': {
        'apibank': {'ndcg@10_toolsift': 0.6277, 'ndcg@10_opensearch': 0.6277, 'ndcg@10_difference': 0.0, 'identical_top10': 40.0, 'n_queries': 40.0},
        'toolink': {'ndcg@10_toolsift': 0.5599, 'ndcg@10_opensearch': 0.5599, 'ndcg@10_difference': 0.0, 'identical_top10': 40.0, 'n_queries': 40.0},
    },
    'set/toollens/cold': {
        'dense top-3': {'tracc': 0.1793, 'recall@gt': 0.1945, 'ndcg@gt': 0.2104, 'set_size_error': 0.3431, 'set_size': 3.0},
        'dense top-|gold| (oracle size)': {'tracc': 0.1945, 'recall@gt': 0.1945, 'ndcg@gt': 0.2104, 'set_size_error': 0.0, 'set_size': 2.6569},
        'hybrid top-3': {'tracc': 0.2585, 'recall@gt': 0.2788, 'ndcg@gt': 0.3144, 'set_size_error': 0.3431, 'set_size': 3.0},
        'PTR cold start (hybrid + score-gap size)': {'tracc': 0.2534, 'recall@gt': 0.2725, 'ndcg@gt': 0.3011, 'set_size_error': 0.3468, 'set_size': 2.9995},
    },
    'set/toollens/history': {
        "nearest training query's set": {'tracc': 0.7475, 'recall@gt': 0.7453, 'ndcg@gt': 0.7446, 'set_size_error': 0.1428, 'set_size': 2.6835},
        'dense top-3': {'tracc': 0.1793, 'recall@gt': 0.1945, 'ndcg@gt': 0.2104, 'set_size_error': 0.3431, 'set_size': 3.0},
        'dense top-|gold| (oracle size)': {'tracc': 0.1945, 'recall@gt': 0.1945, 'ndcg@gt': 0.2104, 'set_size_error': 0.0, 'set_size': 2.6569},
        'hybrid top-3': {'tracc': 0.2589, 'recall@gt': 0.2794, 'ndcg@gt': 0.3151, 'set_size_error': 0.3431, 'set_size': 3.0},
        'PTR cold start (hybrid + score-gap size)': {'tracc': 0.252, 'recall@gt': 0.2727, 'ndcg@gt': 0.3015, 'set_size_error': 0.3655, 'set_size': 2.9563},
        'PTR bundle acquisition only': {'tracc': 0.8777, 'recall@gt': 0.878, 'ndcg@gt': 0.8763, 'set_size_error': 0.0762, 'set_size': 2.6862},
        'PTR, coverage + multi-view forced on': {'tracc': 0.5583, 'recall@gt': 0.6787, 'ndcg@gt': 0.7328, 'set_size_error': 0.6969, 'set_size': 2.2307},
        'PTR (calibrated: acquisition + coverage + multi-view)': {'tracc': 0.8777, 'recall@gt': 0.878, 'ndcg@gt': 0.8763, 'set_size_error': 0.0762, 'set_size': 2.6862},
    },
    'set/toollens/history/slice': {
        "nearest training query's set": {'tracc': 0.8272, 'recall@gt': 0.8275, 'ndcg@gt': 0.8316, 'set_size_error': 0.0625, 'set_size': 2.765},
        'dense top-3': {'tracc': 0.1916, 'recall@gt': 0.1967, 'ndcg@gt': 0.2136, 'set_size_error': 0.2175, 'set_size': 3.0},
        'dense top-|gold| (oracle size)': {'tracc': 0.1967, 'recall@gt': 0.1967, 'ndcg@gt': 0.2136, 'set_size_error': 0.0, 'set_size': 2.7825},
        'hybrid top-3': {'tracc': 0.3107, 'recall@gt': 0.3375, 'ndcg@gt': 0.3855, 'set_size_error': 0.2175, 'set_size': 3.0},
        'PTR cold start (hybrid + score-gap size)': {'tracc': 0.2898, 'recall@gt': 0.3183, 'ndcg@gt': 0.3546, 'set_size_error': 0.2425, 'set_size': 2.965},
        'PTR bundle acquisition only': {'tracc': 0.9029, 'recall@gt': 0.9033, 'ndcg@gt': 0.9046, 'set_size_error': 0.0175, 'set_size': 2.77},
        'PTR, coverage + multi-view forced on': {'tracc': 0.5954, 'recall@gt': 0.7212, 'ndcg@gt': 0.7733, 'set_size_error': 0.7, 'set_size': 2.3225},
        'PTR (calibrated: acquisition + coverage + multi-view)': {'tracc': 0.9029, 'recall@gt': 0.9033, 'ndcg@gt': 0.9046, 'set_size_error': 0.0175, 'set_size': 2.77},
    },
    'mftr/apibank/bm25': {
        'Full-Doc': {'ndcg@5': 0.5032, 'ndcg@10': 0.5172, 'recall@5': 0.5792, 'recall@10': 0.6139, 'completeness@5': 0.3861, 'completeness@10': 0.4059},
        'Stand. Only': {'ndcg@5': 0.4951, 'ndcg@10': 0.5278, 'recall@5': 0.566, 'recall@10': 0.6576, 'completeness@5': 0.396, 'completeness@10': 0.4752},
        'Rewrite Only': {'ndcg@5': 0.6116, 'ndcg@10': 0.6189, 'recall@5': 0.6295, 'recall@10': 0.6477, 'completeness@5': 0.4158, 'completeness@10': 0.4455},
        'Stand. + Rewrite': {'ndcg@5': 0.6363, 'ndcg@10': 0.6597, 'recall@5': 0.6403, 'recall@10': 0.6997, 'completeness@5': 0.4257, 'completeness@10': 0.495},
        'Weighting Only': {'ndcg@5': 0.5801, 'ndcg@10': 0.5873, 'recall@5': 0.6403, 'recall@10': 0.6584, 'completeness@5': 0.4158, 'completeness@10': 0.4257},
        'Weighting + Stand.': {'ndcg@5': 0.5038, 'ndcg@10': 0.5437, 'recall@5': 0.5677, 'recall@10': 0.6675, 'completeness@5': 0.3861, 'completeness@10': 0.4455},
        'Weighting + Rewrite': {'ndcg@5': 0.6301, 'ndcg@10': 0.6595, 'recall@5': 0.6444, 'recall@10': 0.7186, 'completeness@5': 0.4257, 'completeness@10': 0.5347},
        'w/o Adaptive Weighting': {'ndcg@5': 0.652, 'ndcg@10': 0.674, 'recall@5': 0.651, 'recall@10': 0.7054, 'completeness@5': 0.4257, 'completeness@10': 0.4752},
        'w/o Missing Penalty': {'ndcg@5': 0.639, 'ndcg@10': 0.6617, 'recall@5': 0.6295, 'recall@10': 0.6832, 'completeness@5': 0.4059, 'completeness@10': 0.4653},
        'MFTR': {'ndcg@5': 0.6546, 'ndcg@10': 0.6848, 'recall@5': 0.6617, 'recall@10': 0.7434, 'completeness@5': 0.4356, 'completeness@10': 0.5446},
        'Fixed field weights (no training)': {'ndcg@5': 0.644, 'ndcg@10': 0.6585, 'recall@5': 0.6353, 'recall@10': 0.6658, 'completeness@5': 0.4158, 'completeness@10': 0.4455},
        'MFTR + first-stage rank': {'ndcg@5': 0.6257, 'ndcg@10': 0.6715, 'recall@5': 0.6122, 'recall@10': 0.7384, 'completeness@5': 0.3861, 'completeness@10': 0.5446},
        'MFTR + instruction': {'ndcg@5': 0.6811, 'ndcg@10': 0.711, 'recall@5': 0.6865, 'recall@10': 0.7624, 'completeness@5': 0.505, 'completeness@10': 0.5743},
        'MFTR + instruction + rank': {'ndcg@5': 0.6924, 'ndcg@10': 0.721, 'recall@5': 0.6782, 'recall@10': 0.7467, 'completeness@5': 0.495, 'completeness@10': 0.5644},
        'Weighting Only + instruction + rank': {'ndcg@5': 0.6699, 'ndcg@10': 0.7006, 'recall@5': 0.698, 'recall@10': 0.7748, 'completeness@5': 0.495, 'completeness@10': 0.5941},
        'first-stage recall@100': {'default weights': 1.0, 'learned weights pushed down': 0.995},
        'learned weights (bm25, mean over folds)': {'description': 0.1473, 'parameters': -0.0535, 'response': 0.023, 'examples': 0.0249},
    },
    'mftr/apibank/bm25/slice': {
        'Full-Doc': {'ndcg@5': 0.5032, 'ndcg@10': 0.5172, 'recall@5': 0.5792, 'recall@10': 0.6139, 'completeness@5': 0.3861, 'completeness@10': 0.4059},
        'Weighting Only': {'ndcg@5': 0.6297, 'ndcg@10': 0.6553, 'recall@5': 0.6333, 'recall@10': 0.7, 'completeness@5': 0.45, 'completeness@10': 0.5},
        'MFTR': {'ndcg@5': 0.6866, 'ndcg@10': 0.7046, 'recall@5': 0.7, 'recall@10': 0.7417, 'completeness@5': 0.5, 'completeness@10': 0.6},
        'first-stage recall@100': {'default weights': 1.0, 'learned weights pushed down': 1.0},
        'learned weights (bm25, mean over folds)': {'description': 0.1459, 'parameters': -0.0143, 'response': 0.0241, 'examples': 0.0391},
    },
    'mftr/apibank/minilm': {
        'Full-Doc': {'ndcg@5': 0.584, 'ndcg@10': 0.6026, 'recall@5': 0.6873, 'recall@10': 0.7335, 'completeness@5': 0.4851, 'completeness@10': 0.5347},
        'Stand. Only': {'ndcg@5': 0.5675, 'ndcg@10': 0.5981, 'recall@5': 0.6271, 'recall@10': 0.7038, 'completeness@5': 0.396, 'completeness@10': 0.495},
        'Rewrite Only': {'ndcg@5': 0.6731, 'ndcg@10': 0.6919, 'recall@5': 0.7285, 'recall@10': 0.7739, 'completeness@5': 0.5347, 'completeness@10': 0.5941},
        'Stand. + Rewrite': {'ndcg@5': 0.6756, 'ndcg@10': 0.7083, 'recall@5': 0.679, 'recall@10': 0.7591, 'completeness@5': 0.4554, 'completeness@10': 0.5446},
        'Weighting Only': {'ndcg@5': 0.6132, 'ndcg@10': 0.6269, 'recall@5': 0.6889, 'recall@10': 0.7228, 'completeness@5': 0.4653, 'completeness@10': 0.4851},
        'Weighting + Stand.': {'ndcg@5': 0.6067, 'ndcg@10': 0.6356, 'recall@5': 0.651, 'recall@10': 0.7252, 'completeness@5': 0.4158, 'completeness@10': 0.505},
        'Weighting + Rewrite': {'ndcg@5': 0.7001, 'ndcg@10': 0.7338, 'recall@5': 0.7129, 'recall@10': 0.7929, 'completeness@5': 0.505, 'completeness@10': 0.5941},
        'w/o Adaptive Weighting': {'ndcg@5': 0.6771, 'ndcg@10': 0.7079, 'recall@5': 0.6865, 'recall@10': 0.7616, 'completeness@5': 0.4455, 'completeness@10': 0.5446},
        'w/o Missing Penalty': {'ndcg@5': 0.6592, 'ndcg@10': 0.699, 'recall@5': 0.6675, 'recall@10': 0.7715, 'completeness@5': 0.4554, 'completeness@10': 0.5644},
        'MFTR': {'ndcg@5': 0.6952, 'ndcg@10': 0.7248, 'recall@5': 0.7137, 'recall@10': 0.788, 'completeness@5': 0.5149, 'completeness@10': 0.5941},
        'Fixed field weights (no training)': {'ndcg@5': 0.6822, 'ndcg@10': 0.7133, 'recall@5': 0.6823, 'recall@10': 0.7599, 'completeness@5': 0.4455, 'completeness@10': 0.5446},
        'MFTR + first-stage rank': {'ndcg@5': 0.7018, 'ndcg@10': 0.7388, 'recall@5': 0.7096, 'recall@10': 0.8028, 'completeness@5': 0.4851, 'completeness@10': 0.6238},
        'MFTR + instruction': {'ndcg@5': 0.7245, 'ndcg@10': 0.7541, 'recall@5': 0.7269, 'recall@10': 0.7979, 'completeness@5': 0.5248, 'completeness@10': 0.5941},
        'MFTR + instruction + rank': {'ndcg@5': 0.7226, 'ndcg@10': 0.7562, 'recall@5': 0.7318, 'recall@10': 0.8127, 'completeness@5': 0.5248, 'completeness@10': 0.6337},
        'Weighting Only + instruction + rank': {'ndcg@5': 0.7116, 'ndcg@10': 0.7435, 'recall@5': 0.7434, 'recall@10': 0.8185, 'completeness@5': 0.505, 'completeness@10': 0.6238},
        'first-stage recall@100': {'default weights': 1.0, 'learned weights pushed down': 1.0},
        'learned weights (dense, mean over folds)': {'description': 3.6615, 'parameters': 3.5282, 'response': -2.2852, 'examples': 0.1083},
    },
    'mftr/apibank/minilm/slice': {
        'Full-Doc': {'ndcg@5': 0.584, 'ndcg@10': 0.6026, 'recall@5': 0.6873, 'recall@10': 0.7335, 'completeness@5': 0.4851, 'completeness@10': 0.5347},
        'Weighting Only': {'ndcg@5': 0.6573, 'ndcg@10': 0.6651, 'recall@5': 0.7333, 'recall@10': 0.75, 'completeness@5': 0.5, 'completeness@10': 0.55},
        'MFTR': {'ndcg@5': 0.6979, 'ndcg@10': 0.7465, 'recall@5': 0.7, 'recall@10': 0.8167, 'completeness@5': 0.5, 'completeness@10': 0.65},
        'first-stage recall@100': {'default weights': 1.0, 'learned weights pushed down': 1.0},
        'learned weights (dense, mean over folds)': {'description': 3.9395, 'parameters': 3.6957, 'response': -2.4511, 'examples': -0.3172},
    },
    'mftr/apibank/hybrid': {
        'Weighting Only': {'ndcg@5': 0.6539, 'ndcg@10': 0.6635, 'recall@5': 0.7228, 'recall@10': 0.7467, 'completeness@5': 0.4752, 'completeness@10': 0.5149},
        'Weighting + Stand.': {'ndcg@5': 0.5112, 'ndcg@10': 0.54, 'recall@5': 0.6295, 'recall@10': 0.7079, 'completeness@5': 0.4257, 'completeness@10': 0.505},
        'Weighting + Rewrite': {'ndcg@5': 0.6459, 'ndcg@10': 0.6994, 'recall@5': 0.6848, 'recall@10': 0.8193, 'completeness@5': 0.4653, 'completeness@10': 0.6535},
        'w/o Adaptive Weighting': {'ndcg@5': 0.6543, 'ndcg@10': 0.6755, 'recall@5': 0.6559, 'recall@10': 0.7087, 'completeness@5': 0.4257, 'completeness@10': 0.4752},
        'w/o Missing Penalty': {'ndcg@5': 0.6796, 'ndcg@10': 0.719, 'recall@5': 0.6906, 'recall@10': 0.7896, 'completeness@5': 0.4653, 'completeness@10': 0.6238},
        'MFTR': {'ndcg@5': 0.7049, 'ndcg@10': 0.735, 'recall@5': 0.7351, 'recall@10': 0.8086, 'completeness@5': 0.5149, 'completeness@10': 0.6337},
        'Fixed field weights (no training)': {'ndcg@5': 0.6686, 'ndcg@10': 0.6972, 'recall@5': 0.6667, 'recall@10': 0.7384, 'completeness@5': 0.4257, 'completeness@10': 0.5149},
        'MFTR + first-stage rank': {'ndcg@5': 0.6829, 'ndcg@10': 0.7211, 'recall@5': 0.7178, 'recall@10': 0.8152, 'completeness@5': 0.505, 'completeness@10': 0.6436},
        'MFTR + instruction': {'ndcg@5': 0.7092, 'ndcg@10': 0.7381, 'recall@5': 0.7442, 'recall@10': 0.8177, 'completeness@5': 0.5446, 'completeness@10': 0.6436},
        'MFTR + instruction + rank': {'ndcg@5': 0.7097, 'ndcg@10': 0.7443, 'recall@5': 0.7343, 'recall@10': 0.8218, 'completeness@5': 0.5347, 'completeness@10': 0.6436},
        'Weighting Only + instruction + rank': {'ndcg@5': 0.7097, 'ndcg@10': 0.7334, 'recall@5': 0.7541, 'recall@10': 0.8127, 'completeness@5': 0.5248, 'completeness@10': 0.6238},
        'first-stage recall@100': {'default weights': 1.0, 'learned weights pushed down': 1.0},
        'learned weights (bm25, mean over folds)': {'description': 0.0444, 'parameters': -0.1752, 'response': 0.037, 'examples': 0.0307},
        'learned weights (dense, mean over folds)': {'description': 3.7982, 'parameters': 5.2801, 'response': -3.0311, 'examples': -0.1652},
    },
    'mftr/apibank/hybrid/slice': {
        'Weighting Only': {'ndcg@5': 0.6646, 'ndcg@10': 0.6799, 'recall@5': 0.7167, 'recall@10': 0.75, 'completeness@5': 0.5, 'completeness@10': 0.55},
        'MFTR': {'ndcg@5': 0.7358, 'ndcg@10': 0.7773, 'recall@5': 0.7583, 'recall@10': 0.85, 'completeness@5': 0.55, 'completeness@10': 0.75},
        'first-stage recall@100': {'default weights': 1.0, 'learned weights pushed down': 1.0},
        'learned weights (bm25, mean over folds)': {'description': 0.0454, 'parameters': -0.1532, 'response': 0.0467, 'examples': 0.0438},
        'learned weights (dense, mean over folds)': {'description': 4.2179, 'parameters': 5.4515, 'response': -2.9172, 'examples': -0.7291},
    },
    'mftr/toolink/bm25': {
        'Full-Doc': {'ndcg@5': 0.3726, 'ndcg@10': 0.3823, 'recall@5': 0.4162, 'recall@10': 0.4423, 'completeness@5': 0.332, 'completeness@10': 0.3541},
        'Rewrite Only': {'ndcg@5': 0.4527, 'ndcg@10': 0.4688, 'recall@5': 0.4983, 'recall@10': 0.5412, 'completeness@5': 0.3944, 'completeness@10': 0.4205},
        'Weighting Only': {'ndcg@5': 0.3366, 'ndcg@10': 0.3607, 'recall@5': 0.3905, 'recall@10': 0.4532, 'completeness@5': 0.2314, 'completeness@10': 0.3159},
        'w/o Adaptive Weighting': {'ndcg@5': 0.4847, 'ndcg@10': 0.5011, 'recall@5': 0.5059, 'recall@10': 0.5476, 'completeness@5': 0.4004, 'completeness@10': 0.4386},
        'w/o Missing Penalty': {'ndcg@5': 0.475, 'ndcg@10': 0.4921, 'recall@5': 0.4935, 'recall@10': 0.5376, 'completeness@5': 0.3783, 'completeness@10': 0.4245},
        'MFTR': {'ndcg@5': 0.474, 'ndcg@10': 0.4903, 'recall@5': 0.4941, 'recall@10': 0.5362, 'completeness@5': 0.3783, 'completeness@10': 0.4225},
        'Fixed field weights (no training)': {'ndcg@5': 0.4656, 'ndcg@10': 0.4806, 'recall@5': 0.5003, 'recall@10': 0.5379, 'completeness@5': 0.3944, 'completeness@10': 0.4225},
        'MFTR + first-stage rank': {'ndcg@5': 0.4708, 'ndcg@10': 0.4851, 'recall@5': 0.4956, 'recall@10': 0.5322, 'completeness@5': 0.3763, 'completeness@10': 0.4085},
        'MFTR + instruction': {'ndcg@5': 0.5929, 'ndcg@10': 0.6139, 'recall@5': 0.6341, 'recall@10': 0.6824, 'completeness@5': 0.5231, 'completeness@10': 0.5855},
        'MFTR + instruction + rank': {'ndcg@5': 0.5934, 'ndcg@10': 0.6136, 'recall@5': 0.6429, 'recall@10': 0.6905, 'completeness@5': 0.5211, 'completeness@10': 0.5895},
        'Weighting Only + instruction + rank': {'ndcg@5': 0.6341, 'ndcg@10': 0.6556, 'recall@5': 0.6744, 'recall@10': 0.7254, 'completeness@5': 0.5312, 'completeness@10': 0.6097},
        'first-stage recall@100': {'default weights': 0.7317, 'learned weights pushed down': 0.725},
        'learned weights (bm25, mean over folds)': {'description': 0.1706, 'parameters': -0.0065, 'response': 0.0, 'examples': 0.1763},
    },
    'mftr/toolink/bm25/slice': {
        'Full-Doc': {'ndcg@5': 0.4115, 'ndcg@10': 0.4213, 'recall@5': 0.4583, 'recall@10': 0.4833, 'completeness@5': 0.3563, 'completeness@10': 0.3812},
        'Weighting Only': {'ndcg@5': 0.3845, 'ndcg@10': 0.4149, 'recall@5': 0.3917, 'recall@10': 0.475, 'completeness@5': 0.175, 'completeness@10': 0.25},
        'MFTR': {'ndcg@5': 0.4637, 'ndcg@10': 0.4941, 'recall@5': 0.4708, 'recall@10': 0.5417, 'completeness@5': 0.35, 'completeness@10': 0.4},
        'first-stage recall@100': {'default weights': 0.7, 'learned weights pushed down': 0.7417},
        'learned weights (bm25, mean over folds)': {'description': 0.2229, 'parameters': -0.073, 'response': 0.0, 'examples': 0.1826},
    },
    'mftr/toolink/minilm': {
        'Full-Doc': {'ndcg@5': 0.35, 'ndcg@10': 0.381, 'recall@5': 0.3734, 'recall@10': 0.4589, 'completeness@5': 0.2696, 'completeness@10': 0.3622},
        'Rewrite Only': {'ndcg@5': 0.4418, 'ndcg@10': 0.4594, 'recall@5': 0.4497, 'recall@10': 0.496, 'completeness@5': 0.3541, 'completeness@10': 0.4004},
        'Weighting Only': {'ndcg@5': 0.4028, 'ndcg@10': 0.4214, 'recall@5': 0.4462, 'recall@10': 0.4961, 'completeness@5': 0.3421, 'completeness@10': 0.3944},
        'w/o Adaptive Weighting': {'ndcg@5': 0.4863, 'ndcg@10': 0.5018, 'recall@5': 0.5013, 'recall@10': 0.5386, 'completeness@5': 0.3964, 'completeness@10': 0.4165},
        'w/o Missing Penalty': {'ndcg@5': 0.4928, 'ndcg@10': 0.512, 'recall@5': 0.5084, 'recall@10': 0.556, 'completeness@5': 0.4044, 'completeness@10': 0.4366},
        'MFTR': {'ndcg@5': 0.4938, 'ndcg@10': 0.5134, 'recall@5': 0.5084, 'recall@10': 0.558, 'completeness@5': 0.4024, 'completeness@10': 0.4427},
        'Fixed field weights (no training)': {'ndcg@5': 0.5118, 'ndcg@10': 0.5335, 'recall@5': 0.5399, 'recall@10': 0.5979, 'completeness@5': 0.4286, 'completeness@10': 0.4769},
        'MFTR + first-stage rank': {'ndcg@5': 0.4946, 'ndcg@10': 0.5197, 'recall@5': 0.5091, 'recall@10': 0.5768, 'completeness@5': 0.4024, 'completeness@10': 0.4628},
        'MFTR + instruction': {'ndcg@5': 0.6549, 'ndcg@10': 0.6819, 'recall@5': 0.6888, 'recall@10': 0.7569, 'completeness@5': 0.5634, 'completeness@10': 0.6318},
        'MFTR + instruction + rank': {'ndcg@5': 0.6659, 'ndcg@10': 0.6903, 'recall@5': 0.6952, 'recall@10': 0.7552, 'completeness@5': 0.5674, 'completeness@10': 0.6258},
        'Weighting Only + instruction + rank': {'ndcg@5': 0.6609, 'ndcg@10': 0.6878, 'recall@5': 0.7441, 'recall@10': 0.8109, 'completeness@5': 0.5815, 'completeness@10': 0.664},
        'first-stage recall@100': {'default weights': 0.8522, 'learned weights pushed down': 0.8666},
        'learned weights (dense, mean over folds)': {'description': 10.315, 'parameters': 4.4505, 'response': 0.0, 'examples': 0.0},
    },
    'mftr/toolink/minilm/slice': {
        'Full-Doc': {'ndcg@5': 0.3638, 'ndcg@10': 0.3991, 'recall@5': 0.3927, 'recall@10': 0.4833, 'completeness@5': 0.275, 'completeness@10': 0.3688},
        'Weighting Only': {'ndcg@5': 0.3756, 'ndcg@10': 0.4185, 'recall@5': 0.4042, 'recall@10': 0.5042, 'completeness@5': 0.275, 'completeness@10': 0.35},
        'MFTR': {'ndcg@5': 0.5236, 'ndcg@10': 0.5479, 'recall@5': 0.5083, 'recall@10': 0.5667, 'completeness@5': 0.375, 'completeness@10': 0.45},
        'first-stage recall@100': {'default weights': 0.9, 'learned weights pushed down': 0.9},
        'learned weights (dense, mean over folds)': {'description': 8.2307, 'parameters': 4.229, 'response': 0.0, 'examples': 0.0},
    },
    'mftr/mixed/bm25': {
        'Full-Doc': {'ndcg@5': 0.3748, 'ndcg@10': 0.3868, 'recall@5': 0.4271, 'recall@10': 0.459, 'completeness@5': 0.3328, 'completeness@10': 0.3562},
        'Stand. Only': {'ndcg@5': 0.3854, 'ndcg@10': 0.3998, 'recall@5': 0.4334, 'recall@10': 0.4712, 'completeness@5': 0.3378, 'completeness@10': 0.3612},
        'Rewrite Only': {'ndcg@5': 0.4692, 'ndcg@10': 0.4843, 'recall@5': 0.5141, 'recall@10': 0.5537, 'completeness@5': 0.3946, 'completeness@10': 0.4181},
        'Stand. + Rewrite': {'ndcg@5': 0.4763, 'ndcg@10': 0.4958, 'recall@5': 0.5139, 'recall@10': 0.564, 'completeness@5': 0.3963, 'completeness@10': 0.4365},
        'Weighting Only': {'ndcg@5': 0.3461, 'ndcg@10': 0.3785, 'recall@5': 0.436, 'recall@10': 0.5138, 'completeness@5': 0.3144, 'completeness@10': 0.3813},
        'Weighting + Stand.': {'ndcg@5': 0.2337, 'ndcg@10': 0.2849, 'recall@5': 0.3166, 'recall@10': 0.4466, 'completeness@5': 0.2107, 'completeness@10': 0.3177},
        'Weighting + Rewrite': {'ndcg@5': 0.4384, 'ndcg@10': 0.4592, 'recall@5': 0.4847, 'recall@10': 0.5385, 'completeness@5': 0.3712, 'completeness@10': 0.4197},
        'w/o Adaptive Weighting': {'ndcg@5': 0.4416, 'ndcg@10': 0.456, 'recall@5': 0.493, 'recall@10': 0.5283, 'completeness@5': 0.3746, 'completeness@10': 0.408},
        'w/o Missing Penalty': {'ndcg@5': 0.4238, 'ndcg@10': 0.4458, 'recall@5': 0.4666, 'recall@10': 0.5233, 'completeness@5': 0.3462, 'completeness@10': 0.398},
        'MFTR': {'ndcg@5': 0.4231, 'ndcg@10': 0.4436, 'recall@5': 0.471, 'recall@10': 0.523, 'completeness@5': 0.3512, 'completeness@10': 0.398},
        'Fixed field weights (no training)': {'ndcg@5': 0.4092, 'ndcg@10': 0.4364, 'recall@5': 0.4507, 'recall@10': 0.5194, 'completeness@5': 0.311, 'completeness@10': 0.3946},
        'MFTR + first-stage rank': {'ndcg@5': 0.4279, 'ndcg@10': 0.4485, 'recall@5': 0.4769, 'recall@10': 0.5288, 'completeness@5': 0.3545, 'completeness@10': 0.403},
        'MFTR + instruction': {'ndcg@5': 0.4918, 'ndcg@10': 0.5275, 'recall@5': 0.5539, 'recall@10': 0.6402, 'completeness@5': 0.4047, 'completeness@10': 0.5184},
        'MFTR + instruction + rank': {'ndcg@5': 0.5024, 'ndcg@10': 0.5374, 'recall@5': 0.5651, 'recall@10': 0.6472, 'completeness@5': 0.4114, 'completeness@10': 0.5217},
        'Weighting Only + instruction + rank': {'ndcg@5': 0.5963, 'ndcg@10': 0.6181, 'recall@5': 0.6577, 'recall@10': 0.7108, 'completeness@5': 0.51, 'completeness@10': 0.5836},
        'first-stage recall@100': {'default weights': 0.7399, 'learned weights pushed down': 0.7425},
        'learned weights (bm25, mean over folds)': {'description': 0.2095, 'parameters': 0.0137, 'response': -0.0727, 'examples': 0.2287},
    },
    'mftr/mixed/bm25/slice': {
        'Full-Doc': {'ndcg@5': 0.3737, 'ndcg@10': 0.3908, 'recall@5': 0.4505, 'recall@10': 0.4948, 'completeness@5': 0.3375, 'completeness@10': 0.3563},
        'Weighting Only': {'ndcg@5': 0.4218, 'ndcg@10': 0.442, 'recall@5': 0.4333, 'recall@10': 0.4833, 'completeness@5': 0.225, 'completeness@10': 0.25},
        'MFTR': {'ndcg@5': 0.4792, 'ndcg@10': 0.4891, 'recall@5': 0.4583, 'recall@10': 0.4833, 'completeness@5': 0.275, 'completeness@10': 0.275},
        'first-stage recall@100': {'default weights': 0.7375, 'learned weights pushed down': 0.75},
        'learned weights (bm25, mean over folds)': {'description': 0.1188, 'parameters': -0.0508, 'response': 0.026, 'examples': 0.3154},
    },
    'mftr/mixed/minilm': {
        'Full-Doc': {'ndcg@5': 0.3497, 'ndcg@10': 0.3774, 'recall@5': 0.3811, 'recall@10': 0.4562, 'completeness@5': 0.2692, 'completeness@10': 0.3512},
        'Stand. Only': {'ndcg@5': 0.3644, 'ndcg@10': 0.3937, 'recall@5': 0.3899, 'recall@10': 0.4702, 'completeness@5': 0.2709, 'completeness@10': 0.3545},
        'Rewrite Only': {'ndcg@5': 0.4598, 'ndcg@10': 0.478, 'recall@5': 0.4721, 'recall@10': 0.5183, 'completeness@5': 0.3629, 'completeness@10': 0.4097},
        'Stand. + Rewrite': {'ndcg@5': 0.4715, 'ndcg@10': 0.4906, 'recall@5': 0.4767, 'recall@10': 0.5272, 'completeness@5': 0.3595, 'completeness@10': 0.4114},
        'Weighting Only': {'ndcg@5': 0.4499, 'ndcg@10': 0.4615, 'recall@5': 0.4837, 'recall@10': 0.5134, 'completeness@5': 0.3612, 'completeness@10': 0.398},
        'Weighting + Stand.': {'ndcg@5': 0.4359, 'ndcg@10': 0.4527, 'recall@5': 0.4634, 'recall@10': 0.5061, 'completeness@5': 0.3478, 'completeness@10': 0.3913},
        'Weighting + Rewrite': {'ndcg@5': 0.5271, 'ndcg@10': 0.5529, 'recall@5': 0.5504, 'recall@10': 0.6173, 'completeness@5': 0.4247, 'completeness@10': 0.49},
        'w/o Adaptive Weighting': {'ndcg@5': 0.4173, 'ndcg@10': 0.4379, 'recall@5': 0.4749, 'recall@10': 0.5288, 'completeness@5': 0.3579, 'completeness@10': 0.4164},
        'w/o Missing Penalty': {'ndcg@5': 0.5208, 'ndcg@10': 0.5469, 'recall@5': 0.5389, 'recall@10': 0.607, 'completeness@5': 0.4097, 'completeness@10': 0.4816},
        'MFTR': {'ndcg@5': 0.5215, 'ndcg@10': 0.5477, 'recall@5': 0.5408, 'recall@10': 0.609, 'completeness@5': 0.4114, 'completeness@10': 0.4833},
        'Fixed field weights (no training)': {'ndcg@5': 0.373, 'ndcg@10': 0.4098, 'recall@5': 0.4755, 'recall@10': 0.5748, 'completeness@5': 0.3428, 'completeness@10': 0.4548},
        'MFTR + first-stage rank': {'ndcg@5': 0.5065, 'ndcg@10': 0.5295, 'recall@5': 0.54, 'recall@10': 0.5992, 'completeness@5': 0.4114, 'completeness@10': 0.4716},
        'MFTR + instruction': {'ndcg@5': 0.6582, 'ndcg@10': 0.6881, 'recall@5': 0.6869, 'recall@10': 0.7617, 'completeness@5': 0.5368, 'completeness@10': 0.612},
        'MFTR + instruction + rank': {'ndcg@5': 0.6602, 'ndcg@10': 0.6912, 'recall@5': 0.6849, 'recall@10': 0.7617, 'completeness@5': 0.5284, 'completeness@10': 0.612},
        'Weighting Only + instruction + rank': {'ndcg@5': 0.6692, 'ndcg@10': 0.6952, 'recall@5': 0.7362, 'recall@10': 0.8004, 'completeness@5': 0.5652, 'completeness@10': 0.6388},
        'first-stage recall@100': {'default weights': 0.776, 'learned weights pushed down': 0.8135},
        'learned weights (dense, mean over folds)': {'description': 9.403, 'parameters': 3.6452, 'response': 2.1571, 'examples': -2.592},
    },
    'mftr/mixed/minilm/slice': {
        'Full-Doc': {'ndcg@5': 0.3425, 'ndcg@10': 0.3619, 'recall@5': 0.399, 'recall@10': 0.4453, 'completeness@5': 0.2625, 'completeness@10': 0.325},
        'Weighting Only': {'ndcg@5': 0.4702, 'ndcg@10': 0.4754, 'recall@5': 0.5333, 'recall@10': 0.5458, 'completeness@5': 0.375, 'completeness@10': 0.375},
        'MFTR': {'ndcg@5': 0.5247, 'ndcg@10': 0.5511, 'recall@5': 0.5042, 'recall@10': 0.5708, 'completeness@5': 0.325, 'completeness@10': 0.4},
        'first-stage recall@100': {'default weights': 0.8333, 'learned weights pushed down': 0.8083},
        'learned weights (dense, mean over folds)': {'description': 5.214, 'parameters': 3.9348, 'response': 2.4486, 'examples': 1.1911},
    },
    'rerank/apibank/cross-encoder': {
        'Full-Doc': {'ndcg@5': 0.584, 'ndcg@10': 0.6026, 'recall@5': 0.6873, 'recall@10': 0.7335, 'completeness@5': 0.4851, 'completeness@10': 0.5347},
        'Weighting Only': {'ndcg@5': 0.6132, 'ndcg@10': 0.6269, 'recall@5': 0.6889, 'recall@10': 0.7228, 'completeness@5': 0.4653, 'completeness@10': 0.4851},
        'MFTR': {'ndcg@5': 0.6952, 'ndcg@10': 0.7248, 'recall@5': 0.7137, 'recall@10': 0.788, 'completeness@5': 0.5149, 'completeness@10': 0.5941},
        'MFTR + cross-encoder': {'ndcg@5': 0.734, 'ndcg@10': 0.7592, 'recall@5': 0.783, 'recall@10': 0.8416, 'completeness@5': 0.6337, 'completeness@10': 0.6634},
        'first-stage recall@100': {'default weights': 1.0, 'learned weights pushed down': 1.0},
        'learned weights (dense, mean over folds)': {'description': 3.6615, 'parameters': 3.5282, 'response': -2.2852, 'examples': 0.1083},
    },
    'rerank/apibank/cross-encoder/slice': {
        'Full-Doc': {'ndcg@5': 0.584, 'ndcg@10': 0.6026, 'recall@5': 0.6873, 'recall@10': 0.7335, 'completeness@5': 0.4851, 'completeness@10': 0.5347},
        'Weighting Only': {'ndcg@5': 0.6573, 'ndcg@10': 0.6651, 'recall@5': 0.7333, 'recall@10': 0.75, 'completeness@5': 0.5, 'completeness@10': 0.55},
        'MFTR': {'ndcg@5': 0.6979, 'ndcg@10': 0.7465, 'recall@5': 0.7, 'recall@10': 0.8167, 'completeness@5': 0.5, 'completeness@10': 0.65},
        'MFTR + cross-encoder': {'ndcg@5': 0.7356, 'ndcg@10': 0.7773, 'recall@5': 0.7417, 'recall@10': 0.8333, 'completeness@5': 0.55, 'completeness@10': 0.65},
        'first-stage recall@100': {'default weights': 1.0, 'learned weights pushed down': 1.0},
        'learned weights (dense, mean over folds)': {'description': 3.9395, 'parameters': 3.6957, 'response': -2.4511, 'examples': -0.3172},
    },
    'rerank/toolink/cross-encoder': {
        'Full-Doc': {'ndcg@5': 0.35, 'ndcg@10': 0.381, 'recall@5': 0.3734, 'recall@10': 0.4589, 'completeness@5': 0.2696, 'completeness@10': 0.3622},
        'Weighting Only': {'ndcg@5': 0.4028, 'ndcg@10': 0.4214, 'recall@5': 0.4462, 'recall@10': 0.4961, 'completeness@5': 0.3421, 'completeness@10': 0.3944},
        'MFTR': {'ndcg@5': 0.4938, 'ndcg@10': 0.5134, 'recall@5': 0.5084, 'recall@10': 0.558, 'completeness@5': 0.4024, 'completeness@10': 0.4427},
        'MFTR + cross-encoder': {'ndcg@5': 0.5237, 'ndcg@10': 0.542, 'recall@5': 0.5302, 'recall@10': 0.5798, 'completeness@5': 0.4064, 'completeness@10': 0.4507},
        'first-stage recall@100': {'default weights': 0.8522, 'learned weights pushed down': 0.8666},
        'learned weights (dense, mean over folds)': {'description': 10.315, 'parameters': 4.4505, 'response': 0.0, 'examples': 0.0},
    },
    'rerank/toolink/cross-encoder/slice': {
        'Full-Doc': {'ndcg@5': 0.3638, 'ndcg@10': 0.3991, 'recall@5': 0.3927, 'recall@10': 0.4833, 'completeness@5': 0.275, 'completeness@10': 0.3688},
        'Weighting Only': {'ndcg@5': 0.3756, 'ndcg@10': 0.4185, 'recall@5': 0.4042, 'recall@10': 0.5042, 'completeness@5': 0.275, 'completeness@10': 0.35},
        'MFTR': {'ndcg@5': 0.5236, 'ndcg@10': 0.5479, 'recall@5': 0.5083, 'recall@10': 0.5667, 'completeness@5': 0.375, 'completeness@10': 0.45},
        'MFTR + cross-encoder': {'ndcg@5': 0.5435, 'ndcg@10': 0.5573, 'recall@5': 0.5375, 'recall@10': 0.5708, 'completeness@5': 0.4, 'completeness@10': 0.425},
        'first-stage recall@100': {'default weights': 0.9, 'learned weights pushed down': 0.9},
        'learned weights (dense, mean over folds)': {'description': 8.2307, 'parameters': 4.229, 'response': 0.0, 'examples': 0.0},
    },
    'train/apibank/tool-rank': {
        'dev NDCG@10 by λ': {'λ=0.0': 0.6978, 'λ=0.1': 0.715, 'λ=0.2': 0.7171, 'λ=0.3': 0.7521, 'λ=0.4': 0.7128, 'λ=0.5': 0.6612, 'λ=0.6': 0.6085, 'λ=0.7': 0.5769, 'λ=0.8': 0.5565, 'λ=0.9': 0.5125, 'λ=1.0': 0.4548},
        'chosen λ': {'fusion_weight': 0.3},
        'training': {'epoch 1 loss': 0.7164, 'pairs': 404.0, 'positives': 146.0},
    },
    'train/apibank/tool-rank/slice': {
        'dev NDCG@10 by λ': {'λ=0.0': 0.7473},
        'training': {'epoch 1 loss': 0.8425, 'pairs': 93.0, 'positives': 59.0},
    },
}

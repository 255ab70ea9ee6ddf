#!/usr/bin/env python3
"""Builds the embedded catalog (accelerators.csv, offerings.csv, prices.csv) from the shared
reference data (../shared/data/hardware.csv and prices.csv).

    python3 schema/seed/build_seed.py [SHARED_DATA_DIR]

The generated CSV files are committed; this script documents, and lets anyone repeat, every
decision taken on the way (see README.md beside it). It uses only the Python standard library.
"""
import csv
import re
import sys
from collections import OrderedDict
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parents[1] / ".." / "shared" / "data"

# ---------------------------------------------------------------------------------------------
# Accelerators

ACC_COLUMNS = [
    "id", "name", "vendor", "form_factor", "launch_year", "fp32_tflops", "tf32_tflops",
    "fp16_tflops", "bf16_tflops", "fp8_tflops", "int8_tops", "fp4_tflops", "memory_gb",
    "memory_type", "memory_gb_per_s", "cache_mb", "scale_up_interconnect", "scale_up_gb_per_s",
    "host_pcie_gen", "tdp_w", "purchase_price_usd", "purchase_price_as_of",
    "purchase_price_source", "spec_source", "confidence", "notes", "workloads",
    "workloads_source"]

# What each accelerator is offered for (`training;inference` or `inference`), with the
# vendor's or cloud's document that says so. The training planner skips accelerators not
# offered for training.
_NVIDIA_DC = ("NVIDIA data-center GPU: CUDA training and inference (NVIDIA product page; "
              "cuDNN/NCCL support matrix)")
_CONSUMER = ("CUDA GPU, trains and serves with standard frameworks (PyTorch CUDA support)")
WORKLOADS = {
    "a10": ("training;inference", "NVIDIA A10 product page: 'AI training and inference' with graphics; CUDA frameworks train on it"),
    "a10g": ("training;inference", "AWS EC2 G5 page: 'for graphics-intensive and machine learning use cases ... training and inference'"),
    "l4": ("training;inference", "Google Cloud GPU docs (G2/L4: inference, fine-tuning and small training); NVIDIA L4 product page"),
    "t4": ("training;inference", "AWS EC2 G4dn page: 'machine learning inference and small-scale training'; NVIDIA T4 product page"),
    "l40s": ("training;inference", "NVIDIA L40S product page: 'AI training and inference' with graphics"),
    "gaudi2": ("training;inference", "Intel Gaudi 2 product brief: deep-learning training and inference processor"),
    "gaudi3": ("training;inference", "Intel Gaudi 3 product brief: AI training and inference"),
    "inferentia2": ("inference", "AWS Neuron docs (PyTorch NeuronX setup): 'PyTorch NeuronX for training on Trn1 and Trn2; for inference on Inf2, Trn1 and Trn2'; AWS Inf2 page: built for deep-learning inference"),
    "trainium1": ("training;inference", "AWS Neuron docs: PyTorch NeuronX trains on Trn1 and serves on Trn1; AWS Trn1 page"),
    "trainium2": ("training;inference", "AWS Neuron docs: PyTorch NeuronX trains on Trn2 and serves on Trn2; AWS Trn2 page"),
    "tpu-v4": ("training;inference", "Google Cloud TPU v4 docs: training and inference"),
    "tpu-v5e": ("training;inference", "Google Cloud TPU v5e docs: 'cost-efficient training and inference (serving)'"),
    "tpu-v5p": ("training;inference", "Google Cloud TPU v5p docs: training of large models and inference"),
    "tpu-v6e": ("training;inference", "Google Cloud TPU v6e (Trillium) docs: training, fine-tuning and serving"),
    "mi250x": ("training;inference", "AMD Instinct MI250X product page: HPC and AI training; ROCm PyTorch support"),
    "mi300x": ("training;inference", "AMD Instinct MI300X product page: generative AI training and inference"),
    "mi325x": ("training;inference", "AMD Instinct MI325X product page: AI training and inference"),
    "mi355x": ("training;inference", "AMD Instinct MI355X product page: generative AI training and inference"),
    "tpu7x": ("training;inference", "Google Cloud TPU7x (Ironwood) docs: large-scale training and serving"),
    "trainium3": ("training;inference", "AWS Neuron docs (trainium3.rst): Trn3 trains and serves with PyTorch NeuronX"),
    "rtx-3090": ("training;inference", "NVIDIA GeForce RTX 3090: " + _CONSUMER),
    "rtx-4090": ("training;inference", "NVIDIA GeForce RTX 4090: " + _CONSUMER),
    "rtx-5090": ("training;inference", "NVIDIA GeForce RTX 5090: " + _CONSUMER),
}

# A10G: a GA102 data-center SKU made for AWS g5 with the A10's fp32 peak (31.2 TFLOP/s in
# hardware.csv, HFCAT) and memory (24 GB GDDR6, 600 GB/s). NVIDIA publishes no A10G datasheet;
# the A10 datasheet (NV_A10) gives GA102 data-center parts full-rate FP32-accumulate tensor
# cores: dense TF32 = 2x, FP16/BF16 = 4x, INT8 = 8x the fp32 peak (62.5 / 125 / 250). The
# A10G is taken at those A10 rates; third-party spec tables list the same (BF16 125 dense, 250
# sparse). hardware-sources.md caveat 7 allows A10 x 0.5-1.0 until measured: confidence stays
# low and the lower bound is stated in notes. No fp8 (Ampere has none).
PEAK_SUPPLEMENTS = {
    "a10g": {
        "tf32_tflops": "62.5", "fp16_tflops": "125", "bf16_tflops": "125", "int8_tops": "250",
        "spec_source": "HFCAT (fp32 31.2, 150 W, 6 MB L2); tensor peaks at the A10 datasheet's "
                       "GA102 data-center rates (NV_A10: TF32 2x, FP16/BF16 4x, INT8 8x fp32) "
                       "- NVIDIA publishes no A10G datasheet",
        "notes": "tensor rates taken as A10-class (hardware-sources.md caveat 7: A10 x 0.5-1.0 "
                 "until measured; at the lower bound bf16 is 62.5 TFLOP/s and plans take up to "
                 "2x as long); NVIDIA does not publish A10G tensor specs",
    },
    # Google's TPU7x page tabulates v5p, v6e and TPU7x side by side with an FP8 row
    # (docs.cloud.google.com/tpu/docs/tpu7x); hardware.csv has bf16 and int8 only.
    "tpu-v5p": {
        "fp8_tflops": "459",
        "notes": "fp8 459 TFLOP/s from the Google Cloud TPU7x docs' comparison table "
                 "(v5p / v6e / TPU7x); hardware.csv lacks it",
    },
    "tpu-v6e": {
        "fp8_tflops": "918",
        "notes": "fp8 918 TFLOP/s from the Google Cloud TPU7x docs' comparison table "
                 "(v5p / v6e / TPU7x; STAS lists the same); hardware.csv lacks it",
    },
}

NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?")


def number(text, what, notes):
    """First number in `text`; a range 'a-b' gives its midpoint. '~x' and '(derived)' are
    recorded in `notes` so nothing approximate looks exact."""
    text = (text or "").strip()
    if not text or text in ("–", "-", "n/a"):
        return ""
    rng = re.match(r"^~?\s*(\d[\d,]*(?:\.\d+)?)\s*-\s*(\d[\d,]*(?:\.\d+)?)", text)
    if rng:
        lo, hi = (float(g.replace(",", "")) for g in rng.groups())
        notes.append(f"{what}: midpoint of range '{text}'")
        return fmt((lo + hi) / 2)
    m = NUMBER.search(text)
    if not m:
        return ""
    if text.startswith("~") or "derived" in text:
        notes.append(f"{what}: approximate in source ('{text}')")
    return fmt(float(m.group(0).replace(",", "")))


def fmt(x):
    return ("%.6f" % x).rstrip("0").rstrip(".")


def build_accelerators():
    rows = list(csv.DictReader(open(SHARED / "hardware.csv", newline="")))
    out = []
    for r in rows:
        notes = []
        a = OrderedDict()
        a["id"] = r["id"]
        a["name"] = r["accelerator"]
        a["vendor"] = r["vendor"]
        a["form_factor"] = r["form_factor"]
        a["launch_year"] = r["launch_year"]
        a["fp32_tflops"] = number(r["fp32_tflops"], "fp32", notes)
        a["tf32_tflops"] = number(r["tf32_tflops_dense"], "tf32", notes)
        a["fp16_tflops"] = number(r["fp16_tflops_dense"], "fp16", notes)
        a["bf16_tflops"] = number(r["bf16_tflops_dense"], "bf16", notes)
        a["fp8_tflops"] = number(r["fp8_tflops_dense"], "fp8", notes)
        a["int8_tops"] = number(r["int8_tops_dense"], "int8", notes)
        a["fp4_tflops"] = number(r["fp4_tflops_dense"], "fp4", notes)
        a["memory_gb"] = number(r["memory_gb"], "memory_gb", notes)
        a["memory_type"] = r["memory_type"]
        a["memory_gb_per_s"] = number(r["memory_bw_gbs"], "memory_gb_per_s", notes)
        a["cache_mb"] = number(r["l2_or_onchip_cache_mb"], "cache_mb", notes)
        a["scale_up_interconnect"] = r["scale_up_interconnect"]
        a["scale_up_gb_per_s"] = number(r["scale_up_bw_gbs_bidir_per_chip"], "scale_up", notes)
        a["host_pcie_gen"] = r["host_pcie_gen"]
        a["tdp_w"] = number(r["tdp_w"], "tdp_w", notes)
        a["purchase_price_usd"] = number(r["purchase_price_usd"], "purchase_price_usd", notes)
        a["purchase_price_as_of"] = r["price_date"] if a["purchase_price_usd"] else ""
        a["purchase_price_source"] = r["price_source"] if a["purchase_price_usd"] else ""
        a["spec_source"] = r["spec_source"]
        # The API serves high|medium|low; a qualified rating keeps its wording in notes.
        confidence = r["confidence"].strip()
        a["confidence"] = confidence.split()[0] if confidence else "low"
        if confidence != a["confidence"]:
            notes.append(f"confidence in source: '{confidence}'")
        a["notes"] = "; ".join(x for x in [r["notes"]] + notes if x)
        out.append(a)
    by_id = {a["id"]: a for a in out}

    # Peaks hardware.csv lacks that a planner needs, each with its reasoning. The A10G has
    # fp32 only there ("NVIDIA does not publish A10G tensor specs"), so every AWS g5 offering
    # was skipped as unsupported for bf16/fp16 serving and training.
    for acc_id, changes in PEAK_SUPPLEMENTS.items():
        a = by_id[acc_id]
        for column in ("tf32_tflops", "fp16_tflops", "bf16_tflops", "fp8_tflops", "int8_tops"):
            if changes.get(column) and a[column]:
                raise SystemExit(f"{acc_id}.{column}: hardware.csv now has a figure; "
                                 "drop the supplement")
        a.update(changes)

    # Accelerators the price data needs (or the issue asks for) that hardware.csv lacks. Each
    # is a documented variant of a row above; the differences are the only new facts.
    def variant(base, **changes):
        a = OrderedDict(by_id[base])
        a.update(changes)
        return a

    out.append(variant(
        "v100-sxm2-32gb", id="v100-sxm2-16gb", name="V100 SXM2 16GB", memory_gb="16",
        launch_year="2017", purchase_price_usd="", purchase_price_as_of="",
        purchase_price_source="",
        notes="16GB variant of the V100 SXM2 (same SM count, clocks and HBM2 bandwidth); "
              "prices.csv rows 'V100 16GB' (AWS p3, Lambda, Vast.ai) map here",
        confidence="medium"))
    out.append(variant(
        "h100-sxm", id="h800", name="H800 SXM", scale_up_interconnect="NVLink 4 (8 links)",
        scale_up_gb_per_s="400", purchase_price_usd="", purchase_price_as_of="",
        purchase_price_source="", confidence="medium",
        spec_source="H100 SXM compute/memory (STAS; NV_H100) with NVLink cut to 400 GB/s "
                    "(NVIDIA H800 export variant; DeepSeek-V3 technical report arXiv 2412.19437 "
                    "section 3.1: H800 NVLink 400 GB/s)",
        notes="H100 SXM with scale-up NVLink reduced to 400 GB/s bidirectional per GPU; "
              "not rented by the providers in this catalog"))
    out.append(variant(
        "h100-sxm", id="gh200", name="GH200 (H100 96GB HBM3 + Grace)", form_factor="Superchip",
        launch_year="2023", memory_gb="96", memory_type="HBM3", memory_gb_per_s="4000",
        scale_up_interconnect="NVLink-C2C 900 GB/s to Grace; NVLink 4 to other GPUs",
        tdp_w="1000", purchase_price_usd="", purchase_price_as_of="", purchase_price_source="",
        confidence="medium",
        spec_source="RECALL (NVIDIA GH200 datasheet: H100 Hopper GPU, 96 GB HBM3 at 4 TB/s, "
                    "module power up to 1000 W incl. Grace CPU); compute as H100 SXM",
        notes="Lambda gpu_1x_gh200 and CoreWeave GH200 rows map here; TDP is the whole "
              "superchip (GPU + Grace CPU + memory)"))
    out.extend(new_part(**p) for p in NEW_PARTS_2026)
    out.sort(key=lambda a: a["id"])
    return out


def new_part(**fields):
    a = OrderedDict((c, "") for c in ACC_COLUMNS[:-2])
    a.update(fields)
    return a


# The 2026 parts hardware.csv predates: dense datasheet peaks (no 2:4 sparsity), with each
# figure's source in spec_source and what sources disagree on in notes
# (shared/docs/frontier-estimator-references.md section 5, catalog-sources-2026.md).
NEW_PARTS_2026 = [
    dict(id="b300", name="B300 (HGX/DGX, per GPU)", vendor="NVIDIA", form_factor="SXM / HGX board",
         launch_year="2025", fp32_tflops="75", tf32_tflops="1125", fp16_tflops="2250",
         bf16_tflops="2250", fp8_tflops="4500", fp4_tflops="13125", memory_gb="288",
         memory_type="HBM3e", memory_gb_per_s="8000",
         scale_up_interconnect="NVLink 5 (18 links, 900 GB/s per dir)", scale_up_gb_per_s="1800",
         host_pcie_gen="Gen6", tdp_w="1100",
         spec_source="NVIDIA HGX B300 table (per-GPU dense: TF32 1125, FP16/BF16 2250, FP8/FP6 "
                     "4500); glennklockwood.com garden 'B300' (FP4 dense 13125, 288 GB HBM3e "
                     "12-high, 8 TB/s); stas00/ml-engineering compute/accelerator (DGX B300 "
                     "datasheet); RECALL (HGX B300 1100 W TGP)",
         confidence="medium",
         notes="FP6 runs at the FP8 rate (4500); dense FP4 is tabulated as 12600, 13125 and "
               "15000 (NVFP4) by different sources: 13125 kept; INT8 is cut on Blackwell Ultra "
               "(HGX B300 table: 2 POPS sparse per board) and left empty; TGP 1100 W on HGX "
               "(1000 W power-capped DGX setting, 1400 W as GB300)"),
    dict(id="gb300", name="GB300 (per GPU in NVL72)", vendor="NVIDIA",
         form_factor="Superchip (4 GPUs + 2 Grace per board)", launch_year="2025",
         fp32_tflops="80", tf32_tflops="1250", fp16_tflops="2500", bf16_tflops="2500",
         fp8_tflops="5000", fp4_tflops="15000", memory_gb="288", memory_type="HBM3e",
         memory_gb_per_s="8000",
         scale_up_interconnect="NVLink 5 (72-GPU domain, 900 GB/s per dir) + NVLink-C2C to Grace",
         scale_up_gb_per_s="1800", host_pcie_gen="n/a (C2C to Grace)", tdp_w="1400",
         spec_source="NVIDIA GB300 NVL72 page (1.1 EF dense FP4, 360 PF FP8 per 72 GPUs, ~20 TB "
                     "HBM, 130 TB/s NVLink); glennklockwood.com garden 'B300'; NVIDIA Mission "
                     "Control FAQ (rack budget 'four 1.4kW GPUs' per tray)",
         confidence="medium",
         notes="per-GPU figures are the rack's divided by 72 (FP4 15278 rounded to the 15000 "
               "NVIDIA quotes per GPU); FP6 at the FP8 rate; 288 GB per GPU (20 TB / 72 = 278 "
               "usable as NVIDIA rounds it)"),
    dict(id="h20", name="H20", vendor="NVIDIA", form_factor="SXM5", launch_year="2024",
         fp32_tflops="44", tf32_tflops="74", fp16_tflops="148", bf16_tflops="148",
         fp8_tflops="296", int8_tops="296", memory_gb="96", memory_type="HBM3",
         memory_gb_per_s="4000", cache_mb="60", scale_up_interconnect="NVLink 4 (18 links)",
         scale_up_gb_per_s="900", host_pcie_gen="Gen5", tdp_w="400",
         spec_source="SECONDARY: willitrunai.com/es/gpus/h20-96gb and press tables (FP16 148, "
                      "INT8 296, TF32 74, FP32 44, 4.0 TB/s, 400 W); no NVIDIA datasheet found",
         confidence="low",
         notes="Hopper export part (78 SMs); FP8 at the INT8 rate as on every Hopper; a 141 GB "
               "'H20-3e' exists (NVIDIA/nccl-tests #367) with unpublished specs"),
    dict(id="mi355x", name="MI355X", vendor="AMD", form_factor="OAM", launch_year="2025",
         fp32_tflops="157.3", fp16_tflops="2516.6", bf16_tflops="2516.6", fp8_tflops="5033.2",
         int8_tops="5033.2", fp4_tflops="10066.3", memory_gb="288", memory_type="HBM3E",
         memory_gb_per_s="8000", cache_mb="256",
         scale_up_interconnect="XGMI (7 links x 76.8 GB/s per dir, 8-GPU mesh)",
         scale_up_gb_per_s="1075", host_pcie_gen="Gen5", tdp_w="1400",
         spec_source="AMD Instinct MI355X product page (288 GB HBM3E, 8 TB/s, 1400 W TBP; FP4/FP6 "
                     "20.1 PF with sparsity = 10.1 dense); stas00/ml-engineering (BF16 2516.6 by "
                     "clock: 2400 MHz x 256 CU x 4096 FLOP/clk); vllm-project/vllm PR #39080 (xGMI "
                     "76.8 GB/s per peer); nod-ai/amd-shark-ai kernel optimization guide",
         confidence="high",
         notes="FP6 runs at the FP4 rate (10066 dense); no TF32 (dropped on CDNA 4); MI350X is "
               "the same die at 2200 MHz and 1000 W"),
    dict(id="tpu7x", name="Google TPU7x (Ironwood)", vendor="Google",
         form_factor="TPU chip (cloud only)", launch_year="2025", bf16_tflops="2307",
         fp8_tflops="4614", memory_gb="192", memory_type="HBM3e", memory_gb_per_s="7370",
         scale_up_interconnect="ICI 3D torus (1200 GB/s bidirectional per chip)",
         scale_up_gb_per_s="1200",
         spec_source="Google Cloud TPU7x docs (docs.cloud.google.com/tpu/docs/tpu7x: BF16 2307, "
                     "FP8 4614 TFLOP/s, 192 GiB HBM, 7.37 TB/s, ICI 1.2 TB/s, 9,216-chip pod)",
         confidence="high",
         notes="HBM in GiB as Google publishes it (like the other TPU rows); FP4 and power not "
               "published"),
    dict(id="trainium3", name="AWS Trainium3", vendor="AWS",
         form_factor="Neuron device (cloud only)", launch_year="2025", tf32_tflops="671",
         fp16_tflops="671", bf16_tflops="671", fp8_tflops="2517", fp4_tflops="2517",
         memory_gb="144", memory_type="HBM3e", memory_gb_per_s="4900",
         scale_up_interconnect="NeuronLink-v4 via NeuronSwitch-v1 (UltraServer, all-to-all)",
         scale_up_gb_per_s="2560",
         spec_source="aws-neuron/aws-neuron-sdk about-neuron/arch/neuron-hardware/trainium3.rst "
                     "and trn3-arch.rst (BF16/FP16/TF32 671, MXFP8/MXFP4 2517 TFLOP/s, 144 GiB, "
                     "4.9 TB/s, NeuronLink-v4 2.56 TB/s per device)",
         confidence="medium",
         notes="FP8 and FP4 are the MX block-scaled formats at one rate; BF16 is 3.75x slower "
               "than MXFP8; the NKI guide says 4.7 TB/s and the UltraServer table 2,048 GiB/s "
               "per device; UltraServer Gen1 64 chips, Gen2 144; power not published"),
]


# ---------------------------------------------------------------------------------------------
# Offerings and prices

OFF_COLUMNS = [
    "id", "provider", "instance_type", "accelerator", "accelerator_count",
    "accelerator_memory_gb", "vcpus", "ram_gib", "interconnect", "scale_out_gbit_per_s",
    "region", "price_type", "spot_interruption_bucket", "notes"]
PRICE_COLUMNS = ["offering_id", "usd_per_hour", "as_of", "as_of_estimated", "source",
                 "verified", "notes"]

PROVIDERS = {"AWS": "aws", "GCP": "gcp", "GCP TPU": "gcp", "Azure": "azure",
             "Lambda": "lambda", "CoreWeave": "coreweave", "Vast.ai": "vastai",
             "RunPod": "runpod"}

ACCELERATORS = {
    "V100 16GB": "v100-sxm2-16gb", "V100 32GB": "v100-sxm2-32gb",
    "A100 40GB SXM": "a100-sxm4-40gb", "A100 80GB SXM": "a100-sxm4-80gb",
    "A100 80GB": "a100-sxm4-80gb", "A100 80GB PCIe": "a100-pcie-80gb",
    "H100 80GB SXM": "h100-sxm", "H100 80GB SXM (Mega)": "h100-sxm", "H100 80GB": "h100-sxm",
    "H100 80GB PCIe": "h100-pcie", "H100 NVL 94GB": "h100-nvl",
    "H200 141GB SXM": "h200-sxm", "H200 141GB": "h200-sxm", "B200 180GB": "b200",
    "GB200 186GB": "gb200", "GH200 (H100 96GB HBM3 + Grace)": "gh200", "GH200 96GB": "gh200",
    "L40S 48GB": "l40s", "L4 24GB": "l4", "A10G 24GB": "a10g", "A10 24GB": "a10",
    "T4 16GB": "t4", "RTX 3090 24GB": "rtx-3090", "RTX 4090 24GB": "rtx-4090",
    "RTX 5090 32GB": "rtx-5090", "Trainium1 (32GB)": "trainium1", "Trainium1": "trainium1",
    "Trainium2 (96GiB)": "trainium2", "Inferentia2 (32GB)": "inferentia2",
    "TPU v4": "tpu-v4", "TPU v5e": "tpu-v5e", "TPU v5p": "tpu-v5p", "TPU v6e": "tpu-v6e",
    "MI300X 192GB": "mi300x"}

# Instance-type labels in prices.csv that carry commentary; the clean name is served and the
# original label is kept in the offering's notes.
INSTANCE_TYPES = {
    "p5e.48xlarge (label truncated in source; 8xH200)": "p5e.48xlarge",
    "a4-highgpu-8g (GPU row only; VM extra)": "a4-highgpu-8g",
    "TPU v4 (per chip)": "tpu-v4-chip",
    "TPU v5e (v5litepod, per chip)": "tpu-v5e-chip",
    "TPU v5p (per chip)": "tpu-v5p-chip",
    "TPU v6e Trillium (per chip)": "tpu-v6e-chip",
}

# Region labels normalised to one code per provider location.
REGIONS = {
    "all US regions": "us", "us": "us", "North America": "north-america",
    "NA": "north-america", "us-east-1/us-east-2": "us-east-1", "us-east-2/us-west-2": "us-east-2",
    "ap-southeast-4 (Melbourne)": "ap-southeast-4", "moved from $1.1378 on 2026-10-28 (+49.8%)":
    "marketplace",
}

# Undated snapshots get an estimated as_of per source, chosen to be no later than the snapshot
# can be: a dated observation of the same offering then always counts as newer.
ESTIMATED_AS_OF = [
    ("catalogs/v7/aws/", "2025-05-01", "SkyPilot AWS v7 snapshot predates the June-2025 P4/P5 "
                                        "price cut"),
    ("catalogs/v7/gcp/", "2025-06-01", "SkyPilot GCP v7 snapshot (undated)"),
    ("catalogs/v6/azure/", "2025-06-01", "SkyPilot Azure v6 snapshot (undated)"),
    ("catalogs/v8/lambda/", "2026-09-01", "SkyPilot Lambda v8 snapshot, consistent with "
                                          "2026-09/11 third-party reads"),
    ("catalogs/v8/runpod/", "2026-01-01", "SkyPilot RunPod v8 snapshot (undated)"),
    ("catalogs/v8/vast/", "2026-01-01", "SkyPilot Vast.ai v8 snapshot (undated)"),
    ("capacityblocks", "2024-12-01", "AWS Capacity Blocks page, rates valid until 2025-01-01"),
    ("recalled by researcher", "2026-11-09", "recalled vendor price, undated; never verified"),
]

# AWS Spot Advisor interruption buckets (share of spot instances interrupted per month), from
# the spotinfo embedded snapshot (alexei-led/spotinfo commit 05e9331, 2025-07), as quoted in
# shared/docs/catalog-references.md section 6. Stale and for us-east-1 only.
SPOT_BUCKETS = {("p5.48xlarge", "us-east-1"): ">20%", ("p4d.24xlarge", "us-east-1"): "10-15%",
                ("p5en.48xlarge", "us-east-1"): "<5%", ("trn1.32xlarge", "us-east-1"): "<5%"}
SPOT_BUCKET_SOURCE = ("AWS Spot Advisor bucket via spotinfo snapshot 05e9331 (2025-07); "
                      "stale, illustrative")


def slug(text):
    return re.sub(r"[^a-z0-9._]+", "-", text.lower()).strip("-")


def scale_out_gbit(text):
    """Scale-out (NIC/EFA/IB) bandwidth per node in Gbit/s from an interconnect description."""
    if not text:
        return ""
    m = re.search(r"=\s*(\d+)\s*Gbps", text)
    if m:
        return m.group(1)
    m = re.search(r"(\d+)\s*x\s*(\d+)\s*(?:Gb/s|Gbps)", text)
    if m:
        return str(int(m.group(1)) * int(m.group(2)))
    m = re.search(r"(\d+)\s*(?:Gb/s|Gbps)", text)
    if m:
        return m.group(1)
    return ""


def verified_flag(row):
    """'yes' is verified. 'conflict' rows are verified only when they are the newer, dated
    reading of a repricing (shared prices-sources.md conflict 6: 'use the newer values');
    catalog outliers flagged as errors stay unverified. Everything else is unverified."""
    v = row["verified"]
    if v == "yes":
        return True
    if v == "conflict" and re.match(r"\d{4}-\d{2}-\d{2}$", row["as_of"]):
        return True
    return False


# Observations of the shared data that are not served: each (provider, sku, region label,
# price type, source substring) with the reason. An offering left with no observation is gone.
RETIRED = [
    ("AWS", None, None, "capacity_block", "capacityblocks",
     "expired: the Capacity Blocks page's December-2024 rates were valid until 2025-01-01; AWS "
     "has priced blocks dynamically since, and no current public rate is in the sources"),
    ("GCP TPU", "TPU v6e Trillium (per chip)", "us-central1", "spot", "catalogs/v7/gcp/",
     "contradicted: 76 % below on-demand in an undated snapshot where Google's TPU page (via "
     "gpuhunt, 2024-12-23) gives v6e spot 1.89 per chip-hour (30 % below) in the regions it lists"),
    ("GCP TPU", "TPU v5p (per chip)", "us-central1", "spot", "catalogs/v7/gcp/",
     "contradicted: 60 % below on-demand in an undated snapshot where Google's TPU page (via "
     "gpuhunt, 2024-12-23) gives v5p spot 2.10-2.415 per chip-hour in the regions it lists"),
    ("AWS", None, None, "commit_1y", "_instances.js @7412fd2",
     "a different purchase option: No Upfront, where the catalog's commitment price is the "
     "lowest of No / Partial / All Upfront (as the AWS importer serves it); the 2025-11-30 dump "
     "of the same list, whose No Upfront rates equal these, gives that rate"),
    ("CoreWeave", "HGX H100 (per GPU, avg)", None, None, "compute-screener",
     "a screener's per-GPU average of the 8-GPU nodes, which CoreWeave does not rent singly"),
    ("CoreWeave", "HGX H200 (per GPU, avg)", None, None, "compute-screener",
     "a screener's per-GPU average of the 8-GPU nodes, which CoreWeave does not rent singly"),
]


def retired(r):
    for provider, sku, region, price_type, source, why in RETIRED:
        if (r["provider"] == provider and sku in (None, r["sku"]) and
                region in (None, r["region"].strip()) and price_type in (None, r["price_type"])
                and source in r["source"]):
            return why
    return None


def build_offerings(accelerator_ids):
    # The shared data, then the dated observations gathered for this catalog (same columns;
    # `accelerator` may be the catalog's id): see README.md "dated_prices.csv".
    rows = list(csv.DictReader(open(SHARED / "prices.csv", newline="")))
    rows += list(csv.DictReader(open(HERE / "dated_prices.csv", newline="")))
    offerings = OrderedDict()
    prices = []
    skipped = []
    for line, r in enumerate(rows, start=2):
        why = retired(r)
        if why:
            skipped.append((line, f"{r['provider']} {r['sku']} {r['region']} "
                                  f"{r['price_type']}: {why}"))
            continue
        if r["price_type"] == "seed_claim":
            skipped.append((line, "seed claim, checked against sources (not a price)"))
            continue
        if not r["usd_per_hour"].strip():
            skipped.append((line, f"{r['provider']} {r['sku']} {r['price_type']}: no price "
                                  f"in any source ({r['verified']})"))
            continue
        if "GPU row only" in r["sku"] and r["provider"] == "GCP" and "a2-ultragpu" in r["sku"]:
            # A GPU-only charge for an instance whose full price is known: not an instance price.
            skipped.append((line, "GCP a2-ultragpu-1g GPU-only row (catalog error per "
                                  "prices-sources.md conflict 2)"))
            continue
        provider = PROVIDERS[r["provider"]]
        accelerator = ACCELERATORS.get(r["accelerator"], r["accelerator"])
        assert accelerator in accelerator_ids, accelerator
        instance = INSTANCE_TYPES.get(r["sku"], r["sku"].strip())
        region_label = r["region"].strip()
        region = REGIONS.get(region_label, slug(region_label))
        price_type = r["price_type"]
        oid = slug(f"{provider}-{instance}-{region}-{price_type.replace('_', '-')}")
        o = offerings.get(oid)
        if o is None:
            notes = []
            if instance != r["sku"].strip():
                notes.append(f"source label '{r['sku'].strip()}'")
            if region != region_label and region_label:
                notes.append(f"source region '{region_label}'")
            o = OrderedDict(
                id=oid, provider=provider, instance_type=instance, accelerator=accelerator,
                accelerator_count=r["accel_count"], accelerator_memory_gb=r["accel_mem_gb_each"],
                vcpus=r["vcpus"], ram_gib=r["ram_gib"], interconnect=r["interconnect"],
                scale_out_gbit_per_s=scale_out_gbit(r["interconnect"]), region=region,
                price_type=price_type, spot_interruption_bucket="", notes="; ".join(notes))
            if price_type == "spot" and (instance, region) in SPOT_BUCKETS:
                o["spot_interruption_bucket"] = SPOT_BUCKETS[(instance, region)]
                o["notes"] = "; ".join(x for x in [o["notes"], SPOT_BUCKET_SOURCE] if x)
            offerings[oid] = o
        # A dated observation that states the Spot Advisor bucket replaces the older snapshot's.
        bucket = (r.get("spot_interruption_bucket") or "").strip()
        if price_type == "spot" and bucket:
            o["spot_interruption_bucket"] = bucket
            notes = [x for x in o["notes"].replace(SPOT_BUCKET_SOURCE, "").split("; ") if x]
            o["notes"] = "; ".join(notes + [f"AWS Spot Advisor bucket as of {r['as_of'].strip()} "
                                            f"({r['source'].split(' (')[0]})"])
        else:
            # Later rows of the same offering fill in what earlier rows left blank.
            for key, value in (("vcpus", r["vcpus"]), ("ram_gib", r["ram_gib"]),
                               ("interconnect", r["interconnect"])):
                if not o[key] and value:
                    o[key] = value
            if not o["scale_out_gbit_per_s"]:
                o["scale_out_gbit_per_s"] = scale_out_gbit(r["interconnect"])
            assert o["accelerator"] == accelerator and o["accelerator_count"] == r["accel_count"], oid
        as_of = r["as_of"].strip()
        estimated = "false"
        note = r["notes"].strip()
        if not re.match(r"\d{4}-\d{2}-\d{2}$", as_of):
            for key, date, why in ESTIMATED_AS_OF:
                if key in r["source"]:
                    as_of, estimated = date, "true"
                    note = "; ".join(x for x in [f"as_of estimated: {why} (source said "
                                                 f"'{r['as_of'].strip() or 'no date'}')", note] if x)
                    break
            else:
                raise SystemExit(f"prices.csv line {line}: no as_of rule for source {r['source']}")
        if r["verified"] not in ("yes",):
            note = "; ".join(x for x in [note, f"source verification: {r['verified']}"] if x)
        # `verified` means a dated primary source: a price whose date had to be estimated
        # cannot be verified, whatever the source's own label says.
        verified = verified_flag(r) and estimated == "false"
        if verified_flag(r) and not verified:
            note = "; ".join(x for x in [note, "not verified: the source is undated"] if x)
        # The database keeps a source's name in at most 200 characters (migration 001): a
        # longer one loads from the embedded catalog but fails `gpucost seed`.
        if len(r["source"].strip()) > 200:
            raise SystemExit(f"prices.csv line {line}: source over 200 characters; put the "
                             f"detail in notes")
        prices.append(OrderedDict(
            offering_id=oid, usd_per_hour=r["usd_per_hour"].strip(), as_of=as_of,
            as_of_estimated=estimated, source=r["source"].strip(),
            verified="true" if verified else "false", notes=note))

    # Instance-level facts that one source gives and another (for the same SKU) leaves out.
    by_sku = {}
    for o in offerings.values():
        by_sku.setdefault((o["provider"], o["instance_type"]), []).append(o)
    for group in by_sku.values():
        for key in ("vcpus", "ram_gib", "interconnect", "scale_out_gbit_per_s",
                    "accelerator_memory_gb"):
            known = next((o[key] for o in group if o[key]), "")
            for o in group:
                if not o[key]:
                    o[key] = known
    return list(offerings.values()), prices, skipped


def write(path, columns, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow(r)


def main():
    accelerators = build_accelerators()
    # Rows added to accelerators.csv by hand (documented variants and newer parts) are kept.
    built = {a["id"] for a in accelerators}
    kept = [OrderedDict((c, a.get(c, "")) for c in ACC_COLUMNS)
            for a in csv.DictReader(open(HERE / "accelerators.csv", newline=""))
            if a["id"] not in built]
    accelerators = sorted(accelerators + kept, key=lambda a: a["id"])
    offerings, prices, skipped = build_offerings({a["id"] for a in accelerators})
    for a in accelerators:
        if a["id"] in built:
            a["workloads"], a["workloads_source"] = WORKLOADS.get(
                a["id"], ("training;inference", _NVIDIA_DC))
    write(HERE / "accelerators.csv", ACC_COLUMNS, accelerators)
    write(HERE / "offerings.csv", OFF_COLUMNS, offerings)
    write(HERE / "prices.csv", PRICE_COLUMNS, prices)
    print(f"{len(accelerators)} accelerators, {len(offerings)} offerings, "
          f"{len(prices)} price observations; {len(skipped)} source rows skipped:")
    shared_rows = sum(1 for _ in open(SHARED / "prices.csv")) - 1
    for line, why in skipped:
        where = (f"prices.csv line {line}" if line <= shared_rows + 1 else
                 f"dated_prices.csv line {line - shared_rows}")
        print(f"  {where}: {why}")


if __name__ == "__main__":
    main()

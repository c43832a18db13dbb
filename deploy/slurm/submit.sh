#!/usr/bin/env bash
# Splits one seamstream run over a Slurm cluster: a job array of N segments
# (deploy/slurm/segment.sbatch), then a join that starts once all of them
# succeeded (deploy/slurm/join.sbatch). See deploy/README.md.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: deploy/slurm/submit.sh IN OUT N [--cpu] [--partition P] [-- RUN_ARGS...]

Processes IN in N segments, one Slurm array task each (one GPU each unless
--cpu), then joins them into OUT with IN's audio. Parts, logs and the retry
commands go to OUT.parts/ beside OUT: it and IN must be on a filesystem that
every node sees.

  --cpu          ask for no GPU (give --device cpu in RUN_ARGS too)
  --partition P  submit both jobs to partition P
  RUN_ARGS       `seamstream run` options: --op NAME:k=v, --device, --codec,
                 --crf, --preset, --warmup W, ... (not --segment: set per task)

Environment: SEAMSTREAM, the binary (default: seamstream on the nodes' PATH);
sbatch's own SBATCH_* variables (SBATCH_TIMELIMIT, SBATCH_ACCOUNT, ...).

example:
  deploy/slurm/submit.sh /shared/talk.mp4 /shared/talk-4x3.mp4 16 -- --op retarget:width=75%
EOF
}
die() {
  echo "submit: $*" >&2
  exit 2
}

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
pos=() cpu=0 partition="" run_args=()
while [ $# -gt 0 ]; do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --cpu) cpu=1; shift ;;
    --partition) [ $# -ge 2 ] || die "--partition needs a value, e.g. --partition gpu"; partition=$2; shift 2 ;;
    --partition=*) partition=${1#*=}; shift ;;
    --) shift; run_args=("$@"); break ;;
    -*) die "unknown option '$1'; submit.sh takes --cpu and --partition, and seamstream's options after '--' (see --help)" ;;
    *) pos+=("$1"); shift ;;
  esac
done
if [ ${#pos[@]} -ne 3 ]; then
  usage >&2
  die "expected IN OUT N, got ${#pos[@]} argument(s): ${pos[*]:-none}"
fi
in=${pos[0]} out=${pos[1]} n=${pos[2]}

[[ $n =~ ^[1-9][0-9]*$ ]] || die "N '$n' is not a whole number of segments; give one from 1 up, e.g. 8"
[[ -f $in && -r $in ]] || die "input '$in' is not a readable file; give the path of a video"
base=$(basename "$out")
ext=${base##*.}
[ "$ext" != "$base" ] || die "OUT '$out' has no extension; name the container, e.g. $out.mp4"
case ${ext,,} in
  mp4 | mkv | webm) ;;
  *) die "OUT '$out': .$ext is not a container seamstream joins; use .mp4, .mkv or .webm" ;;
esac
[ -d "$(dirname "$out")" ] || die "the directory of OUT '$out' does not exist; create it first"
for a in "${run_args[@]}"; do
  case $a in
    --segment* | --gpus*) die "RUN_ARGS: '$a' is set by submit.sh per task; leave it out" ;;
  esac
done
[ -z "$partition" ] || [[ $partition =~ ^[A-Za-z0-9_.,-]+$ ]] ||
  die "partition '$partition' is not a partition name; see sinfo -s"
command -v sbatch >/dev/null || die "sbatch not found; run this on a Slurm login node (or put Slurm's bin on PATH)"

# The tasks run elsewhere, maybe in another directory: make paths absolute.
abs() { case $1 in /*) printf '%s' "$1" ;; *) printf '%s' "$PWD/$1" ;; esac; }
in=$(abs "$in") out=$(abs "$out")
[ "$in" != "$out" ] || die "OUT '$out' is IN; name a new output file"
SEAMSTREAM=${SEAMSTREAM:-seamstream}
case $SEAMSTREAM in
  */*)
    SEAMSTREAM=$(abs "$SEAMSTREAM")
    [ -x "$SEAMSTREAM" ] || die "SEAMSTREAM '$SEAMSTREAM' is not an executable file; build it (cargo build --release) or fix the path"
    ;;
  *) command -v "$SEAMSTREAM" >/dev/null ||
    echo "submit: note: '$SEAMSTREAM' is not on PATH here; the compute nodes must have it (or set SEAMSTREAM=/path/to/seamstream)" >&2 ;;
esac

parts=$out.parts
mkdir -p "$parts/logs"
# Copies of the scripts beside the parts, so that a retry submits exactly
# what ran; for --cpu without the GPU request (a partition without GPUs
# refuses any job that asks for one).
if [ "$cpu" = 1 ]; then
  sed '/^#SBATCH --gres=/d' "$here/segment.sbatch" >"$parts/segment.sbatch"
else
  cp "$here/segment.sbatch" "$parts/segment.sbatch"
fi
cp "$here/join.sbatch" "$parts/join.sbatch"

# The scripts read their inputs from the environment (--export=ALL).
RUN_ARGS=""
[ ${#run_args[@]} -eq 0 ] || RUN_ARGS=$(printf '%q ' "${run_args[@]}") RUN_ARGS=${RUN_ARGS% }
IN=$in OUT=$out PARTS=$parts N=$n EXT=$ext
export IN OUT PARTS N EXT RUN_ARGS SEAMSTREAM

common=(--parsable --export=ALL)
[ -z "$partition" ] || common+=(--partition="$partition")
gpu=()
[ "$cpu" = 1 ] || gpu=(--gres=gpu:1)
seg_out="$parts/logs/segment-%A_%a.log"
join_out="$parts/logs/join-%j.log"
# A join whose segments failed can never start: cancel it at once rather
# than leave it pending (DependencyNeverSatisfied).
join_dep=(--kill-on-invalid-dep=yes)

hint=""
[ "$cpu" = 1 ] || hint="; on a partition without GPUs, give --cpu (and --device cpu after --)"
reply=$(sbatch "${common[@]}" "${gpu[@]}" --array="0-$((n - 1))" --output="$seg_out" "$parts/segment.sbatch") ||
  die "sbatch refused the segments job (its message is above)$hint"
array_id=${reply%%;*} # --parsable prints ID or ID;CLUSTER
reply=$(sbatch "${common[@]}" --dependency="afterok:$array_id" "${join_dep[@]}" --output="$join_out" "$parts/join.sbatch") ||
  die "sbatch refused the join job (its message is above); cancel the segments with: scancel $array_id"
join_id=${reply%%;*}

# Quotes a word for the commands printed below (single quotes: readable).
q() {
  if [[ $1 =~ ^[A-Za-z0-9_./:=%,+@-]+$ ]]; then printf '%s' "$1"; else printf "'%s'" "${1//\'/\'\\\'\'}"; fi
}
{
  echo "segments: job $array_id (array 0-$((n - 1)) of $(q "$in"), $([ "$cpu" = 1 ] && echo "CPU only" || echo "one GPU each"))"
  echo "join:     job $join_id (starts once every segment succeeded) -> $(q "$out")"
  echo "parts and logs: $parts/ (logs/segment-${array_id}_K.log, logs/join-$join_id.log); watch: squeue -j $array_id,$join_id"
  echo
  echo "If segment K fails, the join is cancelled. Fix the cause its log names, then rerun"
  echo "that segment (K may be a list: 1,5) and a new join:"
  echo "  export IN=$(q "$IN") OUT=$(q "$OUT") PARTS=$(q "$PARTS") N=$N EXT=$(q "$EXT") SEAMSTREAM=$(q "$SEAMSTREAM") RUN_ARGS=$(q "$RUN_ARGS")"
  echo "  id=\$(sbatch ${common[*]} ${gpu[*]:+${gpu[*]} }--array=K --output=$(q "$seg_out") $(q "$parts/segment.sbatch"))"
  echo "  sbatch ${common[*]} --dependency=afterok:\${id%%;*} ${join_dep[*]} --output=$(q "$join_out") $(q "$parts/join.sbatch")"
} | tee "$parts/submitted.txt"

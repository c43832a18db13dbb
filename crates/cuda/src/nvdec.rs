//! NVIDIA's hardware decoder (NVDEC) driven directly, through the driver's
//! `libnvcuvid`: its bitstream parser finds the pictures in an H.264 or
//! H.265 stream (Annex B), the decoder decodes them into surfaces of its
//! own, and each picture ready to be shown is mapped and handed to the
//! caller as NV12 planes in device memory, in display order. Each access
//! unit goes in with a tag, and each picture comes out with one, but not
//! always its own: where the tags rise in decode order (frame numbers),
//! the parser hands them back in display order, as it would decode times.
//!
//! Why not GStreamer's `nvh264dec`: loading GStreamer's NVIDIA plugin probes
//! every GPU it can see, with a CUDA context and encoder sessions on each
//! (1.8 s on an H200 alone, 4–5 s when four processes start at once), and
//! a split job pays that in every worker. This decoder works in the caller's
//! context and starts in the time the driver takes to make the decoder.
//!
//! The declarations follow `cuviddec.h` and `nvcuvid.h` of NVIDIA's Video
//! Codec SDK (the structures are laid out as there; every reserved field is
//! zero). The library is looked up when first needed, so the crate builds
//! and runs where it is missing.

use std::ffi::{c_int, c_short, c_uint, c_ulong, c_ulonglong, c_void};
use std::sync::OnceLock;

use cudarc::driver::sys;

use crate::Gpu;
use crate::error::{Error, Result};
use crate::planes::DevicePlane;

/// The codecs this decoder takes (`cudaVideoCodec`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    H264,
    H265,
}

impl Codec {
    fn id(self) -> c_int {
        match self {
            Codec::H264 => 4,
            Codec::H265 => 8,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Codec::H264 => "H.264",
            Codec::H265 => "H.265",
        }
    }
}

type CuResult = c_int;
type Parser = *mut c_void;
type Decoder = *mut c_void;

/// `CUVIDEOFORMAT`, what the parser found of the sequence.
#[repr(C)]
#[derive(Clone, Copy)]
struct VideoFormat {
    codec: c_int,
    frame_rate: [c_uint; 2],
    progressive_sequence: u8,
    bit_depth_luma_minus8: u8,
    bit_depth_chroma_minus8: u8,
    min_num_decode_surfaces: u8,
    coded_width: c_uint,
    coded_height: c_uint,
    display_area: [c_int; 4],
    chroma_format: c_int,
    bitrate: c_uint,
    display_aspect_ratio: [c_int; 2],
    video_signal_description: [u8; 4],
    seqhdr_data_length: c_uint,
}

/// `CUVIDPARSERDISPINFO`: a picture ready to be shown.
#[repr(C)]
#[derive(Clone, Copy)]
struct DisplayInfo {
    picture_index: c_int,
    progressive_frame: c_int,
    top_field_first: c_int,
    repeat_first_field: c_int,
    timestamp: i64,
}

type SequenceCallback = unsafe extern "C" fn(*mut c_void, *mut VideoFormat) -> c_int;
type DecodeCallback = unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int;
type DisplayCallback = unsafe extern "C" fn(*mut c_void, *mut DisplayInfo) -> c_int;

/// `CUVIDPARSERPARAMS`.
#[repr(C)]
struct ParserParams {
    codec_type: c_int,
    max_num_decode_surfaces: c_uint,
    clock_rate: c_uint,
    error_threshold: c_uint,
    max_display_delay: c_uint,
    /// `bAnnexb : 1, bMemoryOptimize : 1, uReserved : 30`.
    bits: c_uint,
    reserved1: [c_uint; 4],
    user_data: *mut c_void,
    sequence: Option<SequenceCallback>,
    decode: Option<DecodeCallback>,
    display: Option<DisplayCallback>,
    operating_point: *mut c_void,
    sei: *mut c_void,
    reserved2: [*mut c_void; 5],
    ext_video_info: *mut c_void,
}

/// `CUVIDSOURCEDATAPACKET`.
#[repr(C)]
struct Packet {
    flags: c_ulong,
    payload_size: c_ulong,
    payload: *const u8,
    timestamp: i64,
}

const PKT_ENDOFSTREAM: c_ulong = 0x01;
const PKT_TIMESTAMP: c_ulong = 0x02;
const PKT_ENDOFPICTURE: c_ulong = 0x08;

/// `CUVIDDECODECREATEINFO`.
#[repr(C)]
struct CreateInfo {
    width: c_ulong,
    height: c_ulong,
    num_decode_surfaces: c_ulong,
    codec_type: c_int,
    chroma_format: c_int,
    creation_flags: c_ulong,
    bit_depth_minus8: c_ulong,
    intra_decode_only: c_ulong,
    max_width: c_ulong,
    max_height: c_ulong,
    reserved1: c_ulong,
    display_area: [c_short; 4],
    output_format: c_int,
    deinterlace_mode: c_int,
    target_width: c_ulong,
    target_height: c_ulong,
    num_output_surfaces: c_ulong,
    vid_lock: *mut c_void,
    target_rect: [c_short; 4],
    enable_histogram: c_ulong,
    reserved2: [c_ulong; 4],
}

/// `CUVIDPROCPARAMS`.
#[repr(C)]
struct ProcParams {
    progressive_frame: c_int,
    second_field: c_int,
    top_field_first: c_int,
    unpaired_field: c_int,
    reserved_flags: c_uint,
    reserved_zero: c_uint,
    raw_input_dptr: c_ulonglong,
    raw_input_pitch: c_uint,
    raw_input_format: c_uint,
    raw_output_dptr: c_ulonglong,
    raw_output_pitch: c_uint,
    reserved1: c_uint,
    output_stream: sys::CUstream,
    reserved: [c_uint; 46],
    histogram_dptr: *mut c_ulonglong,
    reserved2: [*mut c_void; 1],
}

const CHROMA_420: c_int = 1;
const SURFACE_NV12: c_int = 0;
const DEINTERLACE_WEAVE: c_int = 0;
const DEINTERLACE_ADAPTIVE: c_int = 2;
const CREATE_PREFER_CUVID: c_ulong = 0x04;

/// The library's entry points.
struct Api {
    _lib: libloading::Library,
    create_parser: unsafe extern "C" fn(*mut Parser, *mut ParserParams) -> CuResult,
    parse: unsafe extern "C" fn(Parser, *mut Packet) -> CuResult,
    destroy_parser: unsafe extern "C" fn(Parser) -> CuResult,
    create_decoder: unsafe extern "C" fn(*mut Decoder, *mut CreateInfo) -> CuResult,
    destroy_decoder: unsafe extern "C" fn(Decoder) -> CuResult,
    decode_picture: unsafe extern "C" fn(Decoder, *mut c_void) -> CuResult,
    map: unsafe extern "C" fn(
        Decoder,
        c_int,
        *mut c_ulonglong,
        *mut c_uint,
        *mut ProcParams,
    ) -> CuResult,
    unmap: unsafe extern "C" fn(Decoder, c_ulonglong) -> CuResult,
}

fn api() -> std::result::Result<&'static Api, &'static str> {
    static API: OnceLock<std::result::Result<Api, String>> = OnceLock::new();
    API.get_or_init(|| {
        // SAFETY: the driver's own library; loading it runs no code of
        // consequence (it registers nothing).
        let lib = unsafe { libloading::Library::new("libnvcuvid.so.1") }
            .map_err(|e| format!("NVIDIA's decoder library libnvcuvid.so.1 is missing ({e})"))?;
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the symbol's C signature (nvcuvid.h, cuviddec.h)
                // matches the field's type.
                *unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|e| format!("libnvcuvid.so.1 has no {} ({e})", $name))?
            };
        }
        Ok(Api {
            create_parser: sym!("cuvidCreateVideoParser"),
            parse: sym!("cuvidParseVideoData"),
            destroy_parser: sym!("cuvidDestroyVideoParser"),
            create_decoder: sym!("cuvidCreateDecoder"),
            destroy_decoder: sym!("cuvidDestroyDecoder"),
            decode_picture: sym!("cuvidDecodePicture"),
            map: sym!("cuvidMapVideoFrame64"),
            unmap: sym!("cuvidUnmapVideoFrame64"),
            _lib: lib,
        })
    })
    .as_ref()
    .map_err(|e| e.as_str())
}

/// Whether NVIDIA's decoder library is there; an error says why not.
pub fn available() -> std::result::Result<(), &'static str> {
    api().map(|_| ())
}

fn check(r: CuResult, doing: &str) -> Result<()> {
    if r == 0 {
        return Ok(());
    }
    let name = match r {
        1 => "CUDA_ERROR_INVALID_VALUE",
        2 => "CUDA_ERROR_OUT_OF_MEMORY",
        3 => "CUDA_ERROR_NOT_INITIALIZED",
        201 => "CUDA_ERROR_INVALID_CONTEXT",
        700 => "CUDA_ERROR_ILLEGAL_ADDRESS",
        801 => "CUDA_ERROR_NOT_SUPPORTED",
        999 => "CUDA_ERROR_UNKNOWN",
        _ => "a CUDA error",
    };
    let name = format!("{name} ({r})");
    Err(Error::Device(format!(
        "NVIDIA's decoder failed {doing}: {name}"
    )))
}

/// The stream's picture, as the decoder shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    pub codec: Codec,
    /// The shown picture's size (the sequence's display area).
    pub width: usize,
    pub height: usize,
    /// The frame rate the stream states, `None` where it states none.
    pub rate: Option<(u32, u32)>,
    pub progressive: bool,
}

/// A decoded picture, mapped for the length of the caller's callback: NV12,
/// luma then the interleaved chroma, each `pitch` bytes a row.
#[derive(Clone, Copy, Debug)]
pub struct Picture {
    /// A tag as the parser hands it back (see the module's note).
    pub tag: i64,
    pub width: usize,
    pub height: usize,
    /// Luma (`height` rows of `width` bytes) and chroma (`height / 2` rows
    /// of `width` bytes, U and V interleaved).
    pub planes: [DevicePlane; 2],
}

impl Picture {
    /// Copies the picture into `dst` (luma and chroma planes, in device
    /// memory, or in host memory when `on_host`, each with its own pitch) on
    /// `gpu`'s stream, and waits for the copy.
    pub fn copy_to(&self, gpu: &Gpu, dst: [DevicePlane; 2], on_host: bool) -> Result<()> {
        let rows = [self.height, self.height.div_ceil(2)];
        for ((src, dst), rows) in self.planes.iter().zip(dst).zip(rows) {
            if dst.ptr == 0 || dst.pitch < self.width {
                return Err(Error::BadFrame(format!(
                    "a plane of {rows} rows of {} bytes is given {} bytes apart",
                    self.width, dst.pitch
                )));
            }
            let host = sys::CUmemorytype::CU_MEMORYTYPE_HOST;
            let device = sys::CUmemorytype::CU_MEMORYTYPE_DEVICE;
            let copy = sys::CUDA_MEMCPY2D {
                srcXInBytes: 0,
                srcY: 0,
                srcMemoryType: device,
                srcHost: std::ptr::null(),
                srcDevice: src.ptr,
                srcArray: std::ptr::null_mut(),
                srcPitch: src.pitch,
                dstXInBytes: 0,
                dstY: 0,
                dstMemoryType: if on_host { host } else { device },
                dstHost: if on_host {
                    dst.ptr as *mut c_void
                } else {
                    std::ptr::null_mut()
                },
                dstDevice: if on_host { 0 } else { dst.ptr },
                dstArray: std::ptr::null_mut(),
                dstPitch: dst.pitch,
                WidthInBytes: self.width,
                Height: rows,
            };
            // SAFETY: the mapped surface holds the picture's rows at its
            // pitch; the caller's planes hold as many at theirs (checked
            // above for the width; the rows are the caller's promise of a
            // buffer of this size).
            unsafe { sys::cuMemcpy2DAsync_v2(&copy, gpu.stream().cu_stream()) }
                .result()
                .map_err(|e| crate::cuda_err("copying a decoded picture", e))?;
        }
        gpu.stream()
            .synchronize()
            .map_err(|e| crate::cuda_err("waiting for a decoded picture's copy", e))
    }
}

/// The caller's callback for shown pictures, its lifetime erased while a
/// packet is parsed ([`NvDecoder::parse`]).
type Show = *mut (dyn FnMut(&Picture) -> Result<()> + 'static);

/// What the parser's callbacks share with [`NvDecoder`]: the decoder they
/// make, the caller's callback while a packet is parsed, and the first
/// error.
struct Shared {
    gpu: Gpu,
    codec: Codec,
    decoder: Decoder,
    /// The geometry the decoder was made for.
    made_for: Option<(c_uint, c_uint, [c_int; 4], u8, bool)>,
    format: Option<Format>,
    out: Option<Show>,
    error: Option<Error>,
    /// The parser's display delay, in pictures (held in decode surfaces).
    display_delay: u32,
}

/// NVDEC on a GPU for one stream.
pub struct NvDecoder {
    parser: Parser,
    shared: Box<Shared>,
}

// SAFETY: the parser and decoder are driver handles used from one thread at
// a time (`&mut self`), with the context made current first.
unsafe impl Send for NvDecoder {}

impl NvDecoder {
    /// A decoder for `codec` on `gpu` (its context); an error says why there
    /// is none (the library missing, the codec not decodable there).
    ///
    /// `display_delay` is how many decoded pictures the parser may hold
    /// before showing the first of them: 0 shows each picture as soon as it
    /// is decoded (live input: no added latency, but the hardware waits for
    /// each picture to be taken before the next one is sent), and 2–4 let
    /// the next pictures decode while one is being copied (NVIDIA's advice
    /// for throughput).
    pub fn new(gpu: &Gpu, codec: Codec, display_delay: u32) -> Result<NvDecoder> {
        // The library first: without it, an error that says so.
        api().map_err(|e| Error::Unsupported(e.to_string()))?;
        let mut shared = Box::new(Shared {
            gpu: gpu.clone(),
            codec,
            decoder: std::ptr::null_mut(),
            made_for: None,
            format: None,
            out: None,
            error: None,
            display_delay,
        });
        let parser = new_parser(&mut shared)?;
        Ok(NvDecoder { parser, shared })
    }

    /// Starts the stream again (after a seek): the pictures held are
    /// dropped with the parser, and a new parser takes the next packet,
    /// while the decoder made for the stream is kept for it (making one
    /// takes the driver a while; a new sequence of another size makes
    /// another).
    pub fn restart(&mut self) -> Result<()> {
        let api = api().map_err(|e| Error::Unsupported(e.to_string()))?;
        self.shared
            .gpu
            .ctx()
            .bind_to_thread()
            .map_err(|e| crate::cuda_err("making the GPU current for the decoder", e))?;
        // SAFETY: a live parser, destroyed once (replaced below; on an
        // error the decoder is left without one and dropped by its owner).
        unsafe { (api.destroy_parser)(self.parser) };
        self.parser = std::ptr::null_mut();
        self.parser = new_parser(&mut self.shared)?;
        Ok(())
    }

    /// The stream's format, once its first sequence header has been parsed.
    pub fn format(&self) -> Option<Format> {
        self.shared.format
    }

    /// Decodes one access unit (`data`, Annex B) tagged `tag`; `out` is
    /// called with each picture that becomes ready to show, in display
    /// order (none, one, or several).
    pub fn decode(
        &mut self,
        data: &[u8],
        tag: i64,
        out: &mut dyn FnMut(&Picture) -> Result<()>,
    ) -> Result<()> {
        let mut packet = Packet {
            flags: PKT_TIMESTAMP | PKT_ENDOFPICTURE,
            payload_size: data.len() as c_ulong,
            payload: data.as_ptr(),
            timestamp: tag,
        };
        self.parse(&mut packet, out)
    }

    /// Ends the stream: the pictures still held are shown through `out`.
    pub fn finish(&mut self, out: &mut dyn FnMut(&Picture) -> Result<()>) -> Result<()> {
        let mut packet = Packet {
            flags: PKT_ENDOFSTREAM,
            payload_size: 0,
            payload: std::ptr::null(),
            timestamp: 0,
        };
        self.parse(&mut packet, out)
    }

    fn parse(
        &mut self,
        packet: &mut Packet,
        out: &mut dyn FnMut(&Picture) -> Result<()>,
    ) -> Result<()> {
        let api = api().map_err(|e| Error::Unsupported(e.to_string()))?;
        if self.parser.is_null() {
            return Err(Error::Device(
                "NVIDIA's decoder has no parser (its restart failed)".into(),
            ));
        }
        self.shared
            .gpu
            .ctx()
            .bind_to_thread()
            .map_err(|e| crate::cuda_err("making the GPU current for the decoder", e))?;
        // SAFETY: the callback is only reached through `shared.out` while
        // this call runs (cleared below before `out`'s borrow ends); the
        // lifetime is erased to store it.
        let out: *mut (dyn FnMut(&Picture) -> Result<()> + '_) = out;
        self.shared.out = Some(unsafe {
            std::mem::transmute::<*mut (dyn FnMut(&Picture) -> Result<()> + '_), Show>(out)
        });
        self.shared.error = None;
        // SAFETY: a live parser; the packet's payload lives for the call.
        let r = unsafe { (api.parse)(self.parser, packet) };
        self.shared.out = None;
        if let Some(e) = self.shared.error.take() {
            return Err(e);
        }
        check(r, "parsing the stream")
    }
}

impl Drop for NvDecoder {
    fn drop(&mut self) {
        let Ok(api) = api() else { return };
        let _ = self.shared.gpu.ctx().bind_to_thread();
        // SAFETY: live handles, destroyed once; the parser first, as it may
        // call back into `shared`.
        unsafe {
            if !self.parser.is_null() {
                (api.destroy_parser)(self.parser);
            }
            if !self.shared.decoder.is_null() {
                (api.destroy_decoder)(self.shared.decoder);
            }
        }
    }
}

/// A parser for `shared`'s codec that calls back into `shared` (boxed by
/// its owner, so that it stays where the parser points).
fn new_parser(shared: &mut Shared) -> Result<Parser> {
    let api = api().map_err(|e| Error::Unsupported(e.to_string()))?;
    let mut params = ParserParams {
        codec_type: shared.codec.id(),
        // Raised by the sequence callback to what the stream needs.
        max_num_decode_surfaces: 1,
        clock_rate: 0,
        error_threshold: 0,
        max_display_delay: shared.display_delay,
        bits: 0,
        reserved1: [0; 4],
        user_data: shared as *mut Shared as *mut c_void,
        sequence: Some(on_sequence),
        decode: Some(on_decode),
        display: Some(on_display),
        operating_point: std::ptr::null_mut(),
        sei: std::ptr::null_mut(),
        reserved2: [std::ptr::null_mut(); 5],
        ext_video_info: std::ptr::null_mut(),
    };
    let mut parser = std::ptr::null_mut();
    // SAFETY: valid parameters; the caller's `shared` is boxed, so the
    // pointer the parser keeps stays valid while the parser lives (dropped
    // first).
    check(
        unsafe { (api.create_parser)(&mut parser, &mut params) },
        "making its parser",
    )?;
    Ok(parser)
}

/// Runs a callback's body, keeping its error for `parse` and telling the
/// parser to stop (0) on one.
fn callback(user: *mut c_void, body: impl FnOnce(&mut Shared) -> Result<c_int>) -> c_int {
    // SAFETY: the parser hands back the `Shared` it was made with, alive
    // while the parser is, and used by nothing else during the parse.
    let shared = unsafe { &mut *(user as *mut Shared) };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(shared))) {
        Ok(Ok(n)) => n,
        Ok(Err(e)) => {
            shared.error.get_or_insert(e);
            0
        }
        Err(_) => {
            shared
                .error
                .get_or_insert(Error::Device("the decoder's callback panicked".into()));
            0
        }
    }
}

unsafe extern "C" fn on_sequence(user: *mut c_void, format: *mut VideoFormat) -> c_int {
    callback(user, |shared| {
        let api = api().map_err(|e| Error::Unsupported(e.to_string()))?;
        // SAFETY: the parser's format, valid for the call.
        let f = unsafe { *format };
        let codec = shared.codec.name();
        if f.chroma_format != CHROMA_420 || f.bit_depth_luma_minus8 != 0 {
            return Err(Error::Unsupported(format!(
                "{codec} of {}-bit {} is not decoded by seamstream's NVIDIA decoder (8-bit 4:2:0 only)",
                f.bit_depth_luma_minus8 + 8,
                match f.chroma_format {
                    0 => "4:0:0",
                    2 => "4:2:2",
                    3 => "4:4:4",
                    _ => "4:2:0",
                }
            )));
        }
        let [left, top, right, bottom] = f.display_area;
        let (width, height) = ((right - left).max(0), (bottom - top).max(0));
        if width == 0 || height == 0 || width > i16::MAX as c_int || height > i16::MAX as c_int {
            return Err(Error::BadFrame(format!(
                "{codec} stream states a picture of {width}x{height}"
            )));
        }
        // NV12 takes even sizes; an odd edge is cut.
        let (width, height) = (width & !1, height & !1);
        // The pictures held for display take surfaces beyond the stream's
        // own references (the decoder takes at most 32).
        let least = f.min_num_decode_surfaces.max(1) as c_uint;
        let surfaces = (least + 4 + shared.display_delay).min(least.max(32));
        let progressive = f.progressive_sequence != 0;
        let geometry = (
            f.coded_width,
            f.coded_height,
            f.display_area,
            f.min_num_decode_surfaces,
            progressive,
        );
        if shared.made_for != Some(geometry) {
            if !shared.decoder.is_null() {
                // SAFETY: a live decoder, replaced below.
                unsafe { (api.destroy_decoder)(shared.decoder) };
                shared.decoder = std::ptr::null_mut();
                shared.made_for = None;
            }
            let mut info = CreateInfo {
                width: f.coded_width as c_ulong,
                height: f.coded_height as c_ulong,
                num_decode_surfaces: surfaces as c_ulong,
                codec_type: f.codec,
                chroma_format: CHROMA_420,
                creation_flags: CREATE_PREFER_CUVID,
                bit_depth_minus8: 0,
                intra_decode_only: 0,
                max_width: f.coded_width as c_ulong,
                max_height: f.coded_height as c_ulong,
                reserved1: 0,
                display_area: [
                    left as c_short,
                    top as c_short,
                    (left + width) as c_short,
                    (top + height) as c_short,
                ],
                output_format: SURFACE_NV12,
                deinterlace_mode: if progressive {
                    DEINTERLACE_WEAVE
                } else {
                    DEINTERLACE_ADAPTIVE
                },
                target_width: width as c_ulong,
                target_height: height as c_ulong,
                num_output_surfaces: 2,
                vid_lock: std::ptr::null_mut(),
                target_rect: [0; 4],
                enable_histogram: 0,
                reserved2: [0; 4],
            };
            let mut decoder = std::ptr::null_mut();
            // SAFETY: valid creation info; the context is current (`parse`).
            check(
                unsafe { (api.create_decoder)(&mut decoder, &mut info) },
                &format!("making a {codec} decoder for {width}x{height}"),
            )?;
            shared.decoder = decoder;
            shared.made_for = Some(geometry);
            seamstream_core::trace::mark("NVIDIA decoder made");
        }
        let [num, den] = f.frame_rate;
        shared.format = Some(Format {
            codec: shared.codec,
            width: width as usize,
            height: height as usize,
            rate: (num > 0 && den > 0).then_some((num, den)),
            progressive,
        });
        Ok(surfaces as c_int)
    })
}

unsafe extern "C" fn on_decode(user: *mut c_void, picture: *mut c_void) -> c_int {
    callback(user, |shared| {
        let api = api().map_err(|e| Error::Unsupported(e.to_string()))?;
        if shared.decoder.is_null() {
            return Err(Error::BadFrame(
                "a picture came before the stream's sequence header".into(),
            ));
        }
        // SAFETY: the parser's picture parameters, valid for the call, for
        // the decoder it announced with the sequence.
        check(
            unsafe { (api.decode_picture)(shared.decoder, picture) },
            "decoding a picture",
        )?;
        Ok(1)
    })
}

unsafe extern "C" fn on_display(user: *mut c_void, info: *mut DisplayInfo) -> c_int {
    callback(user, |shared| {
        if info.is_null() {
            return Ok(1);
        }
        let api = api().map_err(|e| Error::Unsupported(e.to_string()))?;
        // SAFETY: the parser's display information, valid for the call.
        let d = unsafe { *info };
        let (Some(format), Some(out)) = (shared.format, shared.out) else {
            return Ok(1);
        };
        let mut params = ProcParams {
            progressive_frame: d.progressive_frame,
            second_field: 0,
            top_field_first: d.top_field_first,
            unpaired_field: (d.repeat_first_field < 0) as c_int,
            reserved_flags: 0,
            reserved_zero: 0,
            raw_input_dptr: 0,
            raw_input_pitch: 0,
            raw_input_format: 0,
            raw_output_dptr: 0,
            raw_output_pitch: 0,
            reserved1: 0,
            output_stream: shared.gpu.stream().cu_stream(),
            reserved: [0; 46],
            histogram_dptr: std::ptr::null_mut(),
            reserved2: [std::ptr::null_mut(); 1],
        };
        let (mut ptr, mut pitch) = (0u64, 0u32);
        // SAFETY: a picture index the parser gives for the live decoder.
        check(
            unsafe {
                (api.map)(
                    shared.decoder,
                    d.picture_index,
                    &mut ptr,
                    &mut pitch,
                    &mut params,
                )
            },
            "mapping a decoded picture",
        )?;
        let pitch = pitch as usize;
        let picture = Picture {
            tag: d.timestamp,
            width: format.width,
            height: format.height,
            planes: [
                DevicePlane { ptr, pitch },
                DevicePlane {
                    ptr: ptr + (pitch * format.height.next_multiple_of(2)) as u64,
                    pitch,
                },
            ],
        };
        // SAFETY: the caller's callback, alive for the parse (`parse`).
        let shown = unsafe { (*out)(&picture) };
        // SAFETY: the mapping made above; the callback's copies were waited
        // for (`Picture::copy_to`).
        let unmapped = check(
            unsafe { (api.unmap)(shared.decoder, ptr) },
            "unmapping a picture",
        );
        shown?;
        unmapped?;
        Ok(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The structures' sizes on 64-bit Linux, as NVIDIA's headers lay them
    /// out (the driver reads them at these sizes).
    #[test]
    fn structures_have_the_headers_sizes() {
        assert_eq!(std::mem::size_of::<VideoFormat>(), 64);
        assert_eq!(std::mem::size_of::<DisplayInfo>(), 24);
        assert_eq!(std::mem::size_of::<Packet>(), 32);
        assert_eq!(std::mem::size_of::<ParserParams>(), 136);
        assert_eq!(std::mem::size_of::<CreateInfo>(), 176);
        assert_eq!(std::mem::size_of::<ProcParams>(), 264);
    }
}

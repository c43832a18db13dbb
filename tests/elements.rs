//! The GStreamer elements (`seamcarve`, `seamstream`) on the CPU: caps
//! negotiation to the chain's size, odd sizes, an empty chain, errors on the
//! bus, and a whole pipeline to EOS.

use gstreamer as gst;
use gstreamer::prelude::*;
use gstreamer_check as gst_check;

mod common;

fn init() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        gst::init().unwrap();
        seamstream::plugin::register_static().unwrap();
    });
}

/// Pushes one frame of `w`×`h` `format` through `element` (gst-launch
/// syntax) and gives the caps and byte size that came out.
fn one_frame(element: &str, format: &str, w: i32, h: i32) -> (gst::Caps, usize) {
    init();
    let mut h_ = gst_check::Harness::new_parse(element);
    let caps = gst::Caps::builder("video/x-raw")
        .field("format", format)
        .field("width", w)
        .field("height", h)
        .field("framerate", gst::Fraction::new(30, 1))
        .build();
    h_.set_src_caps(caps.clone());
    let info = gstreamer_video::VideoInfo::from_caps(&caps).unwrap();
    let buffer = gst::Buffer::with_size(info.size()).unwrap();
    // Then the end: an element that looks ahead (a live reframe) gives
    // the frame out only when it drains.
    assert_eq!(h_.push(buffer), Ok(gst::FlowSuccess::Ok));
    assert!(h_.push_event(gst::event::Eos::new()));
    let out = h_.pull().unwrap();
    let caps = h_.sinkpad().unwrap().current_caps().unwrap();
    (caps, out.size())
}

fn size_of(caps: &gst::Caps) -> (i32, i32, String) {
    let s = caps.structure(0).unwrap();
    (
        s.get("width").unwrap(),
        s.get("height").unwrap(),
        s.get::<&str>("format").unwrap().to_string(),
    )
}

#[test]
fn seamcarve_negotiates_the_carved_size() {
    let (caps, bytes) = one_frame("seamcarve width=24 device=cpu", "RGBA", 32, 18);
    assert_eq!(size_of(&caps), (24, 18, "RGBA".into()));
    assert_eq!(bytes, 24 * 18 * 4);
    // Odd sizes and both sides, gray.
    let (caps, _) = one_frame("seamcarve width=11 height=9 device=cpu", "GRAY8", 17, 13);
    assert_eq!(size_of(&caps), (11, 9, "GRAY8".into()));
    // 4:2:0 goes through the chain as RGBA and comes out in its own layout.
    let (caps, bytes) = one_frame("seamcarve width=30 device=cpu", "I420", 40, 20);
    assert_eq!(size_of(&caps), (30, 20, "I420".into()));
    // GStreamer's I420 layout pads each row to 4 bytes.
    assert_eq!(bytes, 32 * 20 + 2 * 16 * 10);
}

#[test]
fn seamcarve_with_an_aspect_reframes_to_that_shape() {
    // 16:9 to 9:16 at the input's height (720 · 9/16 = 405 → 406).
    let (caps, bytes) = one_frame("seamcarve aspect=9:16 device=cpu", "RGBA", 1280, 720);
    assert_eq!(size_of(&caps), (406, 720, "RGBA".into()));
    assert_eq!(bytes, 406 * 720 * 4);
    let (caps, _) = one_frame("seamcarve aspect=1:1 device=cpu", "I420", 640, 360);
    assert_eq!(size_of(&caps), (360, 360, "I420".into()));
    // Wider than the input: the window moves down the picture.
    let (caps, _) = one_frame("seamcarve aspect=21:9 device=cpu", "GRAY8", 640, 360);
    assert_eq!(size_of(&caps), (640, 274, "GRAY8".into()));
    // The property reads back as set.
    init();
    let e = gst::ElementFactory::make("seamcarve")
        .property("aspect", "4:5")
        .build()
        .unwrap();
    assert_eq!(
        e.property::<Option<String>>("aspect").as_deref(),
        Some("4:5")
    );
}

#[test]
fn a_bad_aspect_is_an_error_that_names_it() {
    let err = run_line(
        "videotestsrc num-buffers=2 ! video/x-raw,width=64,height=36 ! videoconvert \
         ! seamcarve aspect=9:0 device=cpu ! appsink name=out sync=false",
    )
    .unwrap_err();
    assert!(err.contains("aspect"), "{err}");
}

#[test]
fn an_empty_chain_keeps_the_size() {
    let (caps, _) = one_frame("seamcarve device=cpu", "NV12", 64, 36);
    assert_eq!(size_of(&caps), (64, 36, "NV12".into()));
    let (caps, _) = one_frame("seamstream device=cpu", "RGBA", 5, 3);
    assert_eq!(size_of(&caps), (5, 3, "RGBA".into()));
}

#[test]
fn seamstream_runs_a_chain_written_on_one_line() {
    let (caps, _) = one_frame(
        "seamstream ops=\"gaussian:sigma=2,border=zero,gray,retarget:width=75%\" device=cpu",
        "RGBA",
        40,
        20,
    );
    assert_eq!(size_of(&caps), (30, 20, "GRAY8".into()));
}

/// Runs a gst-launch line to its end: the frames the appsink named `out`
/// got (width, height each), or the error posted on the bus.
fn run_line(line: &str) -> Result<Vec<(u32, u32)>, String> {
    init();
    let (pipe, sink) = common::video::pipeline_with_sink(line, "out");
    pipe.set_state(gst::State::Playing)
        .unwrap_or(gst::StateChangeSuccess::Success);
    let mut frames = Vec::new();
    let bus = pipe.bus().unwrap();
    let size = |sample: gst::Sample| {
        let info = gstreamer_video::VideoInfo::from_caps(sample.caps().unwrap()).unwrap();
        (info.width(), info.height())
    };
    let result = loop {
        if let Some(sample) = sink.try_pull_sample(gst::ClockTime::from_mseconds(20)) {
            frames.push(size(sample));
            continue;
        }
        let ends = [gst::MessageType::Error, gst::MessageType::Eos];
        if let Some(m) = bus.timed_pop_filtered(gst::ClockTime::from_mseconds(10), &ends) {
            if let gst::MessageView::Error(e) = m.view() {
                break Err(e.error().to_string());
            }
            while let Some(sample) = sink.try_pull_sample(gst::ClockTime::ZERO) {
                frames.push(size(sample));
            }
            break Ok(frames);
        }
    };
    pipe.set_state(gst::State::Null).unwrap();
    result
}

#[test]
fn a_test_source_through_seamcarve_reaches_eos_with_every_frame() {
    let frames = run_line(
        "videotestsrc num-buffers=12 pattern=ball ! video/x-raw,width=64,height=36 ! videoconvert \
         ! seamcarve width=48 device=cpu ! appsink name=out sync=false",
    )
    .unwrap();
    assert_eq!(frames, vec![(48, 36); 12]);
}

#[test]
fn bad_values_are_errors_on_the_bus_that_name_them() {
    let e = run_line(
        "videotestsrc num-buffers=3 ! videoconvert ! seamstream ops=\"blurr:sigma=2\" \
         ! appsink name=out sync=false",
    )
    .unwrap_err();
    assert!(e.contains("`blurr`") && e.contains("gaussian"), "{e}");
    let e = run_line(
        "videotestsrc num-buffers=3 ! videoconvert ! seamcarve width=40 device=gpu \
         ! appsink name=out sync=false",
    )
    .unwrap_err();
    assert!(e.contains("device=gpu") && e.contains("cuda:N"), "{e}");
    // Without a GPU, `device=cuda` says why, and the way out in the
    // element's own words (the library's errors carry no CLI advice).
    if seamstream::cuda::device_count().unwrap_or(0) == 0 {
        let e = run_line(
            "videotestsrc num-buffers=3 ! videoconvert ! seamcarve width=40 device=cuda \
             ! appsink name=out sync=false",
        )
        .unwrap_err();
        assert!(
            e.contains("device=cuda") && e.ends_with("use device=cpu"),
            "{e}"
        );
        assert!(!e.contains("--device"), "{e}");
    }
}

/// A width the input cannot take is an error naming `width` and the
/// input's limit, from the start, after a caps change and when set while
/// playing; it was "could not link" or the demuxer's "not-negotiated".
/// A mask path with a comma is read whole, and a comma in it sets no other
/// key (it was split: `protect="m.png,energy=basic"` set `energy`).
#[test]
fn a_width_the_input_cannot_take_and_a_path_with_commas_are_named() {
    let e = run_line(
        "videotestsrc num-buffers=3 ! video/x-raw,width=64,height=36 ! videoconvert \
         ! seamcarve width=200 device=cpu ! appsink name=out sync=false",
    )
    .unwrap_err();
    assert!(
        e.contains("`width=200`") && e.contains("between 1 and 128"),
        "{e}"
    );
    // A caps change: 64 wide, then 32 (where 100 is over 2×).
    let e = run_line(
        "concat name=c ! videoconvert ! seamcarve width=100 device=cpu ! appsink name=out sync=false \
         videotestsrc num-buffers=3 ! video/x-raw,width=64,height=36 ! c. \
         videotestsrc num-buffers=3 ! video/x-raw,width=32,height=36 ! c.",
    )
    .unwrap_err();
    assert!(
        e.contains("`width=100`") && e.contains("between 1 and 64"),
        "{e}"
    );
    // Set while playing.
    let mut h = harness("seamcarve width=24 device=cpu", 32, 18);
    h.push_and_pull(frame(32, 18, 0)).unwrap();
    let carve = h.find_element("seamcarve").unwrap();
    // A harness's element has no pipeline: its errors go to this bus.
    carve.set_bus(Some(&gst::Bus::new()));
    carve.set_property("width", 100u32);
    assert!(h.push(frame(32, 18, 1)).is_err());
    let bus_error = carve
        .bus()
        .and_then(|b| b.pop_filtered(&[gst::MessageType::Error]))
        .map(|m| match m.view() {
            gst::MessageView::Error(e) => e.error().to_string(),
            _ => String::new(),
        })
        .unwrap_or_default();
    assert!(bus_error.contains("`width=100`"), "{bus_error}");
    for path in ["/nonexistent/a,b.png", "m.png,energy=basic"] {
        let e = run_line(&format!(
            "videotestsrc num-buffers=3 ! video/x-raw,width=64,height=36 ! videoconvert \
             ! seamcarve width=40 protect=\"{path}\" device=cpu ! appsink name=out sync=false"
        ))
        .unwrap_err();
        assert!(e.contains(&format!("cannot read `{path}`")), "{e}");
    }
}

/// A harness around `element` with RGBA `w`×`h` caps on its input.
fn harness(element: &str, w: i32, h: i32) -> gst_check::Harness {
    init();
    let mut h_ = gst_check::Harness::new_parse(element);
    h_.set_src_caps(
        gst::Caps::builder("video/x-raw")
            .field("format", "RGBA")
            .field("width", w)
            .field("height", h)
            .field("framerate", gst::Fraction::new(30, 1))
            .build(),
    );
    h_
}

/// An RGBA frame with detail everywhere, `step` pixels along (so that
/// consecutive frames are a small pan, not a scene cut).
fn frame(w: usize, h: usize, step: usize) -> gst::Buffer {
    // GStreamer is set up first, whichever test runs first.
    init();
    let mut noise = seamstream::noise::Noise::new(9);
    let base = noise.gray(w + 16, h);
    let bytes: Vec<u8> = (0..h)
        .flat_map(|y| {
            let row = base.row(y);
            (0..w).flat_map(move |x| {
                let v = row[x + step];
                [v, v / 2 + 64, 255 - v, 255]
            })
        })
        .collect();
    gst::Buffer::from_mut_slice(bytes)
}

fn bytes(b: &gst::Buffer) -> Vec<u8> {
    b.map_readable().unwrap().as_slice().to_vec()
}

/// A reframe looks ahead 0.4 s by default (12 frames at 30 fps): the
/// latency query says so, every frame still comes out by EOS, each with its
/// own timestamp and in order, and `lookahead=0` holds none back.
#[test]
fn a_reframe_reports_its_look_ahead_as_latency_and_drains_every_frame() {
    for (element, held) in [
        ("seamcarve aspect=1:1 device=cpu", 12),
        ("seamcarve aspect=1:1 lookahead=0.1 device=cpu", 3),
        ("seamcarve aspect=1:1 lookahead=0 device=cpu", 0),
    ] {
        let mut h = harness(element, 64, 36);
        let mut sent = Vec::new();
        for i in 0..20u64 {
            let mut b = frame(64, 36, (i % 8) as usize);
            let pts = gst::ClockTime::from_mseconds(1000 + i * 33);
            b.make_mut().set_pts(pts);
            b.make_mut().set_duration(gst::ClockTime::from_mseconds(33));
            sent.push(pts);
            assert_eq!(h.push(b), Ok(gst::FlowSuccess::Ok), "{element}");
            // What came out so far: all but the held frames.
            assert_eq!(
                h.buffers_received() as usize,
                (i as usize + 1).saturating_sub(held),
                "{element}: after frame {i}"
            );
        }
        let frame_time = gst::ClockTime::SECOND.mul_div_floor(1, 30).unwrap();
        assert_eq!(
            h.query_latency(),
            Some(frame_time * held as u64),
            "{element}"
        );
        assert!(h.push_event(gst::event::Eos::new()));
        let got: Vec<_> = (0..20).map(|_| h.pull().unwrap().pts().unwrap()).collect();
        assert_eq!(got, sent, "{element}");
        assert_eq!(h.buffers_received(), 20, "{element}");
    }
}

#[test]
fn a_width_change_while_playing_renegotiates() {
    let mut h = harness("seamcarve width=24 device=cpu", 32, 18);
    let out = h.push_and_pull(frame(32, 18, 0)).unwrap();
    assert_eq!(out.size(), 24 * 18 * 4);
    h.find_element("seamcarve")
        .unwrap()
        .set_property("width", 20u32);
    let out = h.push_and_pull(frame(32, 18, 1)).unwrap();
    assert_eq!(out.size(), 20 * 18 * 4);
    let caps = h.sinkpad().unwrap().current_caps().unwrap();
    assert_eq!(size_of(&caps), (20, 18, "RGBA".into()));
}

/// Fast mode follows the last frame's seams; a flush or a DISCONT buffer
/// starts afresh, so the frame after it comes out as from a new element.
#[test]
fn flush_and_discont_forget_the_seams() {
    let element = "seamcarve width=48 mode=fast device=cpu";
    let (a, b) = (frame(64, 36, 0), frame(64, 36, 2));
    let fresh = bytes(&harness(element, 64, 36).push_and_pull(b.clone()).unwrap());
    let mut h = harness(element, 64, 36);
    h.push_and_pull(a.clone()).unwrap();
    let followed = bytes(&h.push_and_pull(b.clone()).unwrap());
    assert_ne!(
        followed, fresh,
        "following the last frame made no difference here"
    );

    let mut h = harness(element, 64, 36);
    h.push_and_pull(a.clone()).unwrap();
    assert!(h.push_event(gst::event::FlushStart::new()));
    assert!(h.push_event(gst::event::FlushStop::new(true)));
    let segment = gst::FormattedSegment::<gst::ClockTime>::new();
    assert!(h.push_event(gst::event::Segment::new(&segment)));
    assert_eq!(
        bytes(&h.push_and_pull(b.clone()).unwrap()),
        fresh,
        "after a flush"
    );

    let mut h = harness(element, 64, 36);
    h.push_and_pull(a).unwrap();
    let mut discont = b;
    discont.make_mut().set_flags(gst::BufferFlags::DISCONT);
    assert_eq!(
        bytes(&h.push_and_pull(discont).unwrap()),
        fresh,
        "after a DISCONT"
    );
}

/// CUDA memory is in the templates (for NVIDIA's decoder), but an element
/// that runs on the CPU offers only system memory.
#[test]
fn cuda_memory_is_offered_only_with_a_cuda_context() {
    init();
    let cuda = |caps: &gst::Caps| {
        caps.iter_with_features()
            .any(|(_, f)| f.contains("memory:CUDAMemory"))
    };
    let e = gst::ElementFactory::make("seamcarve")
        .property("width", 24u32)
        .property("device", "cpu")
        .build()
        .unwrap();
    let template = e.static_pad("sink").unwrap().pad_template_caps();
    assert!(cuda(&template), "{template}");
    e.set_state(gst::State::Ready).unwrap();
    let offered = e.static_pad("sink").unwrap().query_caps(None);
    assert!(!offered.is_empty());
    assert!(!cuda(&offered), "{offered}");
    e.set_state(gst::State::Null).unwrap();
}

/// `seamcarve` has every key of the `retarget` operation as a property, with
/// the operation's range and default, and a bad value is a bus error that
/// names it.
#[test]
fn seamcarve_properties_are_the_retarget_keys() {
    init();
    let e = gst::ElementFactory::make("seamcarve").build().unwrap();
    for (name, min, max, default) in [
        ("passes", 1, 64, 32),
        ("band", 1, 15, 15),
        ("coherence", 0, 1000, 100),
    ] {
        let p = e
            .find_property(name)
            .unwrap_or_else(|| panic!("no property {name}"));
        let p = p.downcast_ref::<gst::glib::ParamSpecInt>().unwrap();
        assert_eq!(
            (p.minimum(), p.maximum(), p.default_value()),
            (min, max, default),
            "{name}"
        );
    }
    e.set_property("passes", 8i32);
    assert_eq!(e.property::<i32>("passes"), 8);
    assert_eq!(e.property::<String>("mode"), "fast");
    assert!(e.find_property("protect").is_some() && e.find_property("remove").is_some());

    let err = run_line(
        "videotestsrc num-buffers=3 ! videoconvert ! seamcarve width=40 energy=sharp device=cpu \
         ! appsink name=out sync=false",
    )
    .unwrap_err();
    assert!(err.contains("sharp") && err.contains("forward"), "{err}");
    let err = run_line(
        "videotestsrc num-buffers=3 ! videoconvert \
         ! seamcarve width=40 protect=/nonexistent/mask.png device=cpu \
         ! appsink name=out sync=false",
    )
    .unwrap_err();
    assert!(err.contains("/nonexistent/mask.png"), "{err}");
}

/// Retargeting to the input's own size (or an empty chain) passes the
/// buffers on untouched: 4:2:0 is not taken through RGBA and back.
#[test]
fn a_same_size_request_is_passthrough() {
    init();
    for element in [
        "seamcarve width=64 device=cpu",
        "seamcarve device=cpu",
        "seamstream device=cpu",
    ] {
        let mut h = gst_check::Harness::new_parse(element);
        h.set_src_caps(
            gst::Caps::builder("video/x-raw")
                .field("format", "NV12")
                .field("width", 64)
                .field("height", 36)
                .field("framerate", gst::Fraction::new(30, 1))
                .build(),
        );
        let input = seamstream::noise::Noise::new(4).gray(64, 54);
        let bytes: Vec<u8> = (0..54).flat_map(|y| input.row(y).to_vec()).collect();
        let out = h
            .push_and_pull(gst::Buffer::from_mut_slice(bytes.clone()))
            .unwrap();
        assert!(
            self::bytes(&out) == bytes,
            "{element}: the frame was changed"
        );
    }
    // A different size is not passthrough.
    let mut h = gst_check::Harness::new_parse("seamcarve width=60 device=cpu");
    h.set_src_caps(
        gst::Caps::builder("video/x-raw")
            .field("format", "RGBA")
            .field("width", 64)
            .field("height", 36)
            .field("framerate", gst::Fraction::new(30, 1))
            .build(),
    );
    let out = h.push_and_pull(frame(64, 36, 0)).unwrap();
    assert_eq!(out.size(), 60 * 36 * 4);
}

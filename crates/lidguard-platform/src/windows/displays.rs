//! Active display paths from the display configuration API.

use windows_sys::Win32::Devices::Display::{
    DISPLAYCONFIG_MODE_INFO, DISPLAYCONFIG_PATH_INFO, GetDisplayConfigBufferSizes,
    QDC_ONLY_ACTIVE_PATHS, QueryDisplayConfig,
};
use windows_sys::Win32::Foundation::ERROR_INSUFFICIENT_BUFFER;

/// The output technology of every active display path, or the Win32 error.
///
/// The configuration may change between sizing and querying: retried while the buffers are too
/// small (Microsoft, `GetDisplayConfigBufferSizes`). `ERROR_ACCESS_DENIED` means this process
/// is not in the interactive session (a service, SSH, RDP).
pub(crate) fn active_output_technologies() -> Result<Vec<i32>, u32> {
    loop {
        let (mut paths, mut modes) = (0u32, 0u32);
        // SAFETY: fills the two counts.
        let status =
            unsafe { GetDisplayConfigBufferSizes(QDC_ONLY_ACTIVE_PATHS, &mut paths, &mut modes) };
        if status != 0 {
            return Err(status);
        }
        let mut path_info = vec![DISPLAYCONFIG_PATH_INFO::default(); paths as usize];
        let mut mode_info = vec![DISPLAYCONFIG_MODE_INFO::default(); modes as usize];
        // SAFETY: the buffers hold the counts passed; the call lowers the counts to what it
        // filled.
        let status = unsafe {
            QueryDisplayConfig(
                QDC_ONLY_ACTIVE_PATHS,
                &mut paths,
                path_info.as_mut_ptr(),
                &mut modes,
                mode_info.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        match status {
            0 => {
                path_info.truncate(paths as usize);
                return Ok(path_info
                    .iter()
                    .map(|p| p.targetInfo.outputTechnology)
                    .collect());
            }
            ERROR_INSUFFICIENT_BUFFER => continue,
            other => return Err(other),
        }
    }
}

// Herald's Android library for apps that build with Gradle (Android Gradle Plugin).
// Not built here: this repository builds and tests the same sources with Maven against
// JVM stubs (pom.xml). Include it in an app with includeBuild("path/to/sdks/android") or
// copy herald-core and herald-android as modules.
pluginManagement {
    repositories {
        google()
        mavenCentral()
        gradlePluginPortal()
    }
    plugins {
        id("com.android.library") version "8.5.2"
    }
}

dependencyResolutionManagement {
    repositoriesMode.set(RepositoriesMode.FAIL_ON_PROJECT_REPOS)
    repositories {
        google()
        mavenCentral()
    }
}

rootProject.name = "herald-android-sdk"
include(":herald-core")
include(":herald-android")

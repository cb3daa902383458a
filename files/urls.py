from django.urls import path

from files import views

app_name = "files"

urlpatterns = [
    path("files/<str:file_id>", views.FileDownloadView.as_view(), name="download"),
]
